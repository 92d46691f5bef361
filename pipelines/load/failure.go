package main

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/dorisbeam/dorisbeam/dorisio"
)

// Exit statuses.
const (
	exitOK     = 0
	exitFailed = 1 // the job ran and failed, or verification found a difference
	exitUsage  = 2 // a flag or setting was refused before anything ran
)

// usageError is a refused flag or setting found while building the job:
// one line per problem, exit status 2.
type usageError struct{ lines []string }

func (e *usageError) Error() string { return strings.Join(e.lines, "; ") }

func refused(format string, args ...any) error {
	return &usageError{[]string{fmt.Sprintf(format, args...)}}
}

// writeRefused is dorisio.Write's construction panic (it panics on invalid
// settings by design), told in terms of flags by cli.writeError.
type writeRefused struct{ msg string }

func (e *writeRefused) Error() string { return e.msg }

// jobFailed is the runner's error for a job that ran and failed.
type jobFailed struct{ err error }

func (e *jobFailed) Error() string { return e.err.Error() }
func (e *jobFailed) Unwrap() error { return e.err }

// report prints how the run ended on w and returns the exit status. A job
// failure is printed once: the part that dorisio (or this program) wrote,
// Doris' own words included; the runner's wrapping (plan dump, stack) only
// with verbose.
func report(c *cli, err error, verbose bool, w io.Writer) int {
	return c.report(err, verbose, &redacting{c, w})
}

// redacting passes every line written to w through c.redact: the one way
// a failure is printed.
type redacting struct {
	c *cli
	w io.Writer
}

func (r *redacting) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, r.c.redact(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c *cli) report(err error, verbose bool, w io.Writer) int {
	var (
		intr  *interrupted
		usage *usageError
		write *writeRefused
		job   *jobFailed
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &intr):
		if intr.err != nil && verbose {
			fmt.Fprintf(w, "%s: the runner's error after the interruption:\n%s\n", progName, strings.TrimSpace(intr.err.Error()))
		}
		return intr.code()
	case errors.As(err, &usage):
		for _, l := range usage.lines {
			fmt.Fprintf(w, "%s: %s\n", progName, l)
		}
		return exitUsage
	case errors.As(err, &write):
		for _, l := range c.writeError(write.msg) {
			fmt.Fprintf(w, "%s: %s\n", progName, l)
		}
		return exitUsage
	case errors.As(err, &job):
		full := strings.TrimSpace(job.Error())
		if verbose {
			fmt.Fprintf(w, "%s: the job failed; the runner's error:\n%s\n", progName, full)
			return exitFailed
		}
		ours := dorisio.ErrorMessage(job.err)
		fmt.Fprintf(w, "%s: the job failed: %s\n", progName, c.inFlagTerms(ours))
		if ours != full {
			fmt.Fprintf(w, "%s: run again with -v for the runner's log and its full error (plan, stack)\n", progName)
		}
		return exitFailed
	}
	fmt.Fprintf(w, "%s: %v\n", progName, err)
	return exitFailed
}

// goOption is a dorisio option a job's error may name, as WithName,
// WithName(value) or WithName(), with or without its package.
var goOption = regexp.MustCompile(`(\bdorisio\.)?\bWith[A-Z][A-Za-z]*(\([^()]*\))?`)

// configField is a dorisio.Config field a job's error may name.
var configField = regexp.MustCompile(`\bConfig\.[A-Z][A-Za-z]*\b`)

// inFlagTerms names, in a job's error, each dorisio option and Config
// field this program sets from a flag by that flag, as the user gave it:
// "WithMaxOpenTxns" becomes "--max-open-txns", "WithDelivery(dorisio.Grouped)"
// "--delivery grouped", "Config.User" "--user". The flag table's feeds say
// which option each flag sets, so a new flag needs nothing here; options no
// flag sets keep their Go names, except the password, which this program
// reads from --password-file or, without it, --password-env's variable.
func (c *cli) inFlagTerms(text string) string {
	flagOf := map[string]string{}
	for _, d := range c.ours {
		if strings.HasPrefix(d.feeds, "Config.") {
			flagOf[d.feeds] = d.name
		}
	}
	text = configField.ReplaceAllStringFunc(text, func(m string) string {
		if flag, ok := flagOf[m]; ok {
			return "--" + flag
		}
		if m == "Config.Password" || m == "Config.PasswordFile" {
			if c.o.passwordFile != "" {
				return "the password (--password-file)"
			}
			return "the password (--password-env)"
		}
		return m
	})
	return c.optionsInFlagTerms(text, "")
}

// optionsInFlagTerms names, in text, each dorisio option this program sets
// from a flag by that flag, as inFlagTerms does, except option except.
func (c *cli) optionsInFlagTerms(text, except string) string {
	flagOf := map[string]string{}
	for _, d := range c.ours {
		if strings.HasPrefix(d.feeds, "With") && d.feeds != except {
			flagOf[d.feeds] = d.name
		}
	}
	return goOption.ReplaceAllStringFunc(text, func(m string) string {
		name, arg, _ := strings.Cut(strings.TrimPrefix(m, "dorisio."), "(")
		flag, ok := flagOf[name]
		if !ok {
			return m
		}
		if arg == "" || arg == ")" { // a switch: the flag alone
			return "--" + flag
		}
		return "--" + flag + " " + flagValue(strings.TrimSuffix(arg, ")"))
	})
}

// flagValue is how a flag spells an option's argument: a dorisio constant
// in lower case words joined by '-' (dorisio.AtLeastOnce: at-least-once),
// a Go string unquoted, anything else as it is.
func flagValue(arg string) string {
	if c, ok := strings.CutPrefix(arg, "dorisio."); ok {
		var b strings.Builder
		for i, r := range c {
			if unicode.IsUpper(r) && i > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(unicode.ToLower(r))
		}
		return b.String()
	}
	if s, err := strconv.Unquote(arg); err == nil {
		return shown(s)
	}
	return arg
}
