package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// progName is how usage and errors name the program, whatever its path.
const progName = "load"

// flagDef declares one flag of the program.
type flagDef struct {
	name string
	// value is *string, *bool, *int, *int64 or a flag.Value; what it holds
	// before parsing is the flag's default.
	value any
	// usage is one sentence; a word in backquotes names the flag's value
	// in --help, as in package flag.
	usage string
	// check validates the parsed value; its error says what is accepted
	// ("want ..."). Nil: any value of the type is fine.
	check func() error
	// feeds names the dorisio.Write setting the value goes to (a Config
	// field or a With option), so that Write's construction error can be
	// told in terms of this flag.
	feeds string
	// repeatable flags are not echoed in errors: their value is a list.
	repeatable bool
	// unshown flags are never echoed: their value may be a password given
	// in the wrong place.
	unshown bool
	// ownDefault flags say their default in usage, as it depends on other
	// flags: --help adds no "(default x)" that would contradict it.
	ownDefault bool
}

// flagGroup is a titled block of --help.
type flagGroup struct {
	title string
	flags []flagDef
}

// cli is the program's command line: its flag groups, registered on the
// FlagSet that Beam's runner flags share (beam.Init and the runners read
// flag.CommandLine).
type cli struct {
	fs     *flag.FlagSet
	o      *options
	groups []flagGroup
	ours   map[string]*flagDef
}

func newCLI(fs *flag.FlagSet, o *options) *cli {
	// Errors and usage are printed by parse, in one line and our words.
	fs.Init(progName, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	c := &cli{fs: fs, o: o, groups: flagGroups(o), ours: map[string]*flagDef{}}
	for gi := range c.groups {
		for fi := range c.groups[gi].flags {
			d := &c.groups[gi].flags[fi]
			switch v := d.value.(type) {
			case *string:
				fs.StringVar(v, d.name, *v, d.usage)
			case *bool:
				fs.BoolVar(v, d.name, *v, d.usage)
			case *int:
				fs.IntVar(v, d.name, *v, d.usage)
			case *int64:
				fs.Int64Var(v, d.name, *v, d.usage)
			case *time.Duration:
				fs.DurationVar(v, d.name, *v, d.usage)
			case flag.Value:
				fs.Var(v, d.name, d.usage)
			default:
				panic(fmt.Sprintf("%s: flag --%s: value of unsupported type %T", progName, d.name, d.value))
			}
			c.ours[d.name] = d
		}
	}
	return c
}

// parse parses args. stop reports that the program must exit now with
// status code: after --help or --help-beam (0), or a malformed command
// line (2, said in one line on stderr).
func (c *cli) parse(args []string, stdout, stderr io.Writer) (code int, stop bool) {
	err := c.fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		c.usage(stdout)
		return 0, true
	case err != nil:
		fmt.Fprintf(stderr, "%s: %s\n", progName, c.redact(c.parseError(err)))
		return 2, true
	case c.fs.NArg() > 0:
		fmt.Fprintf(stderr, "%s: unexpected argument %s: every setting is a flag (%s --help lists them)%s\n", progName, shown(c.fs.Arg(0)), progName, c.expandedGlob())
		return 2, true
	case c.o.helpBeam:
		c.beamUsage(stdout)
		return 0, true
	}
	c.o.given = map[string]bool{}
	c.fs.Visit(func(f *flag.Flag) { c.o.given[f.Name] = true })
	return 0, false
}

// expandedGlob is the likely cause of arguments after --input: a shell
// that expanded its unquoted glob into file names, all but the first left
// over.
func (c *cli) expandedGlob() string {
	input := false
	c.fs.Visit(func(f *flag.Flag) { input = input || f.Name == "input" })
	if !input {
		return ""
	}
	return "; quote a glob for --input, or the shell expands it into file names: --input 'data/*.csv'"
}

var (
	undefinedRE   = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)
	needsArgRE    = regexp.MustCompile(`^flag needs an argument: -+(.*)$`)
	invalidRE     = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-+([^:]+): (.*)$`)
	genericErrors = map[string]bool{"parse error": true, "value out of range": true}
)

// parseError rewords package flag's parse errors: the flag as users type
// it (--name), the value, and what the flag accepts.
func (c *cli) parseError(err error) string {
	msg := err.Error()
	if m := undefinedRE.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("unknown flag --%s (%s --help lists the program's flags, %s --help-beam Beam's)", m[1], progName, progName)
	}
	if m := needsArgRE.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("--%s needs a value (%s --help lists the flags)", m[1], progName)
	}
	if m := invalidRE.FindStringSubmatch(msg); m != nil {
		value, name, why := m[1], m[2], m[3]
		if genericErrors[why] {
			why = "want " + c.kind(name)
		}
		if mayHoldSecret(value) {
			return fmt.Sprintf("--%s: %s", name, why)
		}
		return fmt.Sprintf("--%s %s: %s", name, shown(value), why)
	}
	return msg
}

// kind says what a flag's type accepts.
func (c *cli) kind(name string) string {
	f := c.fs.Lookup(name)
	if f == nil {
		return "a valid value"
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return "a valid value"
	}
	switch g.Get().(type) {
	case bool:
		return "true or false"
	case int, int64, uint, uint64:
		return "a whole number"
	case float64:
		return "a number"
	case time.Duration:
		return "a duration such as 500ms or 10s"
	}
	return "a valid value"
}

// check runs every flag's check and the checks of flag combinations,
// returning one line per problem.
func (c *cli) check() []string {
	var bad []string
	for _, g := range c.groups {
		for i := range g.flags {
			d := &g.flags[i]
			if d.check == nil {
				continue
			}
			if err := d.check(); err != nil {
				bad = append(bad, c.named(d, err.Error()))
			}
		}
	}
	resolveDelivery(c.o)
	if !c.o.given["abort-lingering"] && c.o.labelPrefix != "" {
		c.o.abortLingering = true // the program is the job: what an earlier run of it left open is its own (lingering.go)
	}
	return append(bad, checkCombinations(c.o)...)
}

// resolveDelivery makes --delivery grouped when it was not given and the
// run has a --label-prefix, as dorisio.Write does for a bounded input with
// a LabelPrefix: a stable prefix says the job may be re-run, and only
// labels of the rows let that re-run load nothing twice. A stream, files
// (ranges have their own labels) and --all-or-nothing keep exactly-once.
func resolveDelivery(o *options) {
	if !o.given["delivery"] && o.labelPrefix != "" && !o.stream && o.input == "" && !o.allOrNothing {
		o.delivery = "grouped"
	}
}

// named prefixes msg with the flag and its value: "--fe x: msg"; with the
// flag alone when the value is not echoed (redact.go).
func (c *cli) named(d *flagDef, msg string) string {
	if c.hidden(d) {
		return "--" + d.name + ": " + msg
	}
	return "--" + d.name + " " + shown(c.fs.Lookup(d.name).Value.String()) + ": " + msg
}

// shown quotes a value for an error line when it would not read as one word.
func shown(v string) string {
	if v == "" || strings.ContainsAny(v, " \t\n\"'\\") || !strconv.IsPrint(rune(v[0])) {
		return strconv.Quote(v)
	}
	return v
}

// writeError tells dorisio.Write's construction error (msg, the text of
// its panic) in terms of the flags that fed the refused settings: one line
// per refused setting.
func (c *cli) writeError(msg string) []string {
	transform := "dorisio.Write"
	if rest, ok := strings.CutPrefix(msg, "dorisio.WriteFiles: "); ok {
		transform, msg = "dorisio.WriteFiles", rest
	}
	msg = strings.TrimPrefix(msg, "dorisio.Write: ")
	type cut struct {
		at int
		d  *flagDef
	}
	var cuts []cut
	for _, d := range c.ours {
		if d.feeds == "" {
			continue
		}
		for i := 0; ; {
			j := strings.Index(msg[i:], d.feeds)
			if j < 0 {
				break
			}
			at := i + j
			if at == 0 || strings.HasSuffix(msg[:at], "; ") {
				cuts = append(cuts, cut{at, d})
			}
			i = at + len(d.feeds)
		}
	}
	sort.Slice(cuts, func(i, j int) bool { return cuts[i].at < cuts[j].at })
	var lines []string
	if len(cuts) == 0 || cuts[0].at > 0 {
		end := len(msg)
		if len(cuts) > 0 {
			end = cuts[0].at
		}
		lines = append(lines, transform+": "+strings.TrimSuffix(msg[:end], "; "))
	}
	for k, ct := range cuts {
		end := len(msg)
		if k+1 < len(cuts) {
			end = cuts[k+1].at
		}
		seg := strings.TrimSuffix(msg[ct.at:end], "; ")
		// "WithMaxBatchBytes(-5): must be > 0" -> "must be > 0": the
		// setting's own echo of the value gives way to the flag's, except
		// for a list, where it says which element.
		why := seg
		if rest, ok := settingEcho(seg, ct.d.feeds); ok && !ct.d.repeatable {
			why = rest
		} else if !ok {
			why = strings.TrimSpace(strings.TrimPrefix(seg, ct.d.feeds))
		}
		lines = append(lines, c.named(ct.d, c.flagsFor(why, ct.d.feeds))+" ("+transform+"'s "+ct.d.feeds+")")
	}
	return lines
}

// flagsFor names, in msg's advice, the flags that feed the dorisio.Files
// settings and options it names ("use Files.HeaderLines" reads "use
// --header-lines", "applies to WithDelivery(dorisio.GroupCommit) only"
// "applies to --delivery group-commit only"), and the flag that turns on
// what an option no flag feeds would: those settings have no other
// spelling a user of this command can give. The refused option own keeps
// its Go name: the line names its flag already, and a repeatable flag's
// echo of the option says which of its values was refused.
func (c *cli) flagsFor(msg, own string) string {
	for _, d := range c.ours {
		if strings.HasPrefix(d.feeds, "Files.") {
			msg = strings.ReplaceAll(msg, d.feeds, "--"+d.name)
		}
	}
	for option, flag := range optionFlags {
		msg = strings.ReplaceAll(msg, option, flag)
	}
	return c.optionsInFlagTerms(msg, own)
}

// optionFlags are the flags that make this program give an option that no
// flag feeds with its value: --stream's unbounded input turns stream
// batching on.
var optionFlags = map[string]string{"WithStreamBatching(true)": "--stream"}

// settingEcho cuts a refused setting's own echo of its value, or its
// remark on not echoing it, from seg: "WithMaxBatchBytes(-5): must be > 0"
// and "Config.User (not shown: it may hold a password): holds ':'" give
// what follows the ": " after the parenthesis.
func settingEcho(seg, setting string) (rest string, ok bool) {
	rest = strings.TrimLeft(strings.TrimPrefix(seg, setting), " ")
	if strings.HasPrefix(rest, "(") {
		depth := 0
		for i, r := range rest {
			switch r {
			case '(':
				depth++
			case ')':
				depth--
			}
			if depth == 0 {
				rest = rest[i+1:]
				break
			}
		}
	}
	if after, ok := strings.CutPrefix(rest, ": "); ok {
		return after, true
	}
	_, after, ok := strings.Cut(seg, ": ")
	return after, ok
}

const usageHead = `Usage: load [flags]

load writes rows into Apache Doris with dorisio.Write (two-phase-commit Stream
Load, exactly once) on a Beam runner, prism in this process by default. With no
flags it starts an embedded Doris-compatible server, loads 200,000 synthetic
events into 4 tables and checks that each row arrived exactly once.
`

const usageTail = `
Beam's runner flags are accepted too (--runner, --endpoint, --environment_type,
--job_name, and Dataflow's --project, --region, --staging_location, ...):
load --help-beam lists them.

Examples:
  load --rows 1000000 --tables 8
  DORIS_PASSWORD=... load --fe http://fe:8030 --user loader --db demo --table events --tables 4
  load --input 'data/*.csv' --table people --ddl 'demo.people(id BIGINT, name VARCHAR(32))'
  load --fe http://fe:8030 --input 'gs://bucket/export/*.csv.gz' --table people --header-lines 1 --label-prefix people_daily
  load --fe http://fe:8030 --input 'data/*.csv' --table people --create-table --ddl people.sql
  load --stream --duration 10s --rate 2000 --flush-interval 2s
  load --fe http://fe:8030 --runner=universal --endpoint=localhost:8073 --environment_type=LOOPBACK

Exit status: 0 done, 1 the job failed, 2 a flag or setting was refused.
130 (143): interrupted by Ctrl-C (SIGTERM), after aborting what the job
precommitted; a second signal exits at once.
`

// usageWidth is where --help wraps its lines.
const usageWidth = 100

func (c *cli) usage(w io.Writer) {
	fmt.Fprint(w, usageHead)
	for _, g := range c.groups {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, d := range g.flags {
			printFlag(w, c.fs.Lookup(d.name), !d.ownDefault)
		}
	}
	fmt.Fprint(w, usageTail)
}

// beamUsage lists the flags registered by Beam and its runners: every flag
// of the set that is not the program's own.
func (c *cli) beamUsage(w io.Writer) {
	fmt.Fprintf(w, "Beam's flags, accepted by %s besides its own (%s --help):\n\n", progName, progName)
	c.fs.VisitAll(func(f *flag.Flag) {
		if c.ours[f.Name] == nil {
			printFlag(w, f, true)
		}
	})
}

// printFlag prints "  --name value   usage (default x)", wrapped; without
// the default unless withDefault.
func printFlag(w io.Writer, f *flag.Flag, withDefault bool) {
	const indent = 26
	arg, usage := flag.UnquoteUsage(f)
	head := "  --" + f.Name
	if len(f.Name) == 1 {
		head = "  -" + f.Name
	}
	if arg != "" {
		head += " " + arg
	}
	if withDefault && f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" {
		usage += " (default " + f.DefValue + ")"
	}
	lines := wrap(usage, usageWidth-indent)
	if len(head) >= indent-1 {
		fmt.Fprintln(w, head)
	} else {
		fmt.Fprintf(w, "%-*s%s\n", indent, head, lines[0])
		lines = lines[1:]
	}
	for _, l := range lines {
		fmt.Fprintf(w, "%*s%s\n", indent, "", l)
	}
}

// wrap breaks text into lines of at most width bytes at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return append(lines, line)
}
