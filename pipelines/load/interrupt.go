package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/internal/fileprogress"
	"github.com/dorisbeam/dorisbeam/internal/plural"
)

// Ctrl-C (SIGINT) or SIGTERM cancels the job instead of killing the
// process: a killed process leaves its precommitted transactions holding
// the database's running-transaction quota until Doris' precommit timeout
// (an hour by default). Cancelled, each bundle aborts what it precommitted
// (dorisio's abandon), and the program says what happened and exits 130
// (143 for SIGTERM), as a shell reports a process ended by the signal. A
// second signal exits at once, for a user who will not wait for the aborts.

// interrupted is the job cancelled by a signal.
type interrupted struct {
	sig os.Signal
	err error // the run's error, nil if it ended anyway
}

func (e *interrupted) Error() string { return "interrupted by " + sigName(e.sig) }

// code is the exit status for the signal: 128 + its number.
func (e *interrupted) code() int {
	if s, ok := e.sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

func sigName(s os.Signal) string {
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT (Ctrl-C)"
}

// cancelOnSignal returns a context cancelled by the first SIGINT or
// SIGTERM, and a function reporting which one came (nil: none). The
// signals are caught even where a non-interactive shell started the program
// with SIGINT ignored.
func cancelOnSignal(w io.Writer, o *options) (context.Context, func() os.Signal) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	got := make(chan os.Signal, 1)
	go func() {
		first := <-ch
		got <- first
		fmt.Fprintf(w, "%s: %s: stopping the job and aborting the transactions it precommitted; %s again exits at once, leaving them open\n", progName, sigName(first), sigName(first))
		cancel()
		second := <-ch
		fmt.Fprintf(w, "%s: %s again: exiting now; %s\n", progName, sigName(second), leftOpenAdvice(o))
		os.Exit((&interrupted{sig: first}).code())
	}()
	return ctx, func() os.Signal {
		select {
		case s := <-got:
			got <- s
			return s
		default:
			return nil
		}
	}
}

// leftOpenAdvice says, as a second signal exits at once, what becomes of
// the transactions left open. A run without a --label-prefix cannot be
// resumed by one: the next run refuses --abort-lingering without a prefix,
// and names what earlier prefix-less runs left open instead.
func leftOpenAdvice(o *options) string {
	if o.labelPrefix == "" {
		return "transactions left open expire at Doris' precommit timeout; the next run without a --label-prefix names them, each with the command that aborts it"
	}
	return fmt.Sprintf("transactions left open expire at Doris' precommit timeout, or run again with --label-prefix %s: it aborts them (--abort-lingering, on with a prefix), and a stream's replay adopts its batches", shown(o.labelPrefix))
}

// resumeAdvice says how to load what an interrupted job did not, given
// the rows it committed and those of its loads whose outcome Doris could
// not tell (they may be in the tables): a re-run that cannot skip them is
// never advised without saying that it loads them again.
func resumeAdvice(o *options, committedRows, unknownRows int64) string {
	switch {
	case o.stream && o.labelPrefix != "" && o.streamStart != 0:
		return fmt.Sprintf("run the same command again (--label-prefix %s, --stream-start %d, same flags): the stream is replayed and its batches found under their labels are not loaded again", shown(o.labelPrefix), o.streamStart)
	case o.stream:
		return "the rows committed stay; a re-run makes a new stream; for a re-run that resumes, give --stream-start (the first row's event time, Unix ms) and --label-prefix, and run again with the same values"
	case o.labelPrefix != "" && (o.input != "" || o.delivery == "grouped"):
		return fmt.Sprintf("run the same command again (--label-prefix %s, same flags): what is loaded is found under its labels and not loaded again", shown(o.labelPrefix))
	case o.input != "":
		return "without --label-prefix each run has its own labels: a re-run loads every file again; give --label-prefix to make a re-run resume"
	case committedRows == 0 && unknownRows == 0:
		return "nothing was committed: run the same command again"
	}
	again := fmt.Sprintf("the %d committed ones included (kept twice in a table that is not UNIQUE KEY)", committedRows)
	switch {
	case committedRows == 0:
		again = fmt.Sprintf("up to %s of loads whose outcome Doris could not tell included (kept twice in a table that is not UNIQUE KEY, if Doris made them visible)", plural.Count(unknownRows, "row"))
	case unknownRows > 0:
		again = fmt.Sprintf("the %d committed ones and up to %s of loads whose outcome Doris could not tell included (kept twice in a table that is not UNIQUE KEY)", committedRows, plural.Count(unknownRows, "row"))
	}
	return fmt.Sprintf("a re-run cannot resume this job: it generates and loads every row again, %s, since %s; "+
		"to have each row once, empty the tables before re-running; next time give --delivery grouped with a --label-prefix: a re-run of that command skips the parts it finds loaded",
		again, notSkipped(o))
}

// notSkipped says why a re-run of o's synthetic load does not skip what
// it committed.
func notSkipped(o *options) string {
	switch {
	case o.delivery == "at-least-once":
		return "at-least-once loads carry labels of their own run"
	case o.delivery == "group-commit":
		return "group-commit loads carry no label of this program (Doris names them group_commit_…), and nothing finds them loaded"
	case o.labelPrefix == "":
		return "without --label-prefix each run has its own labels"
	}
	return "exactly-once delivery commits per bundle, under labels a re-run does not find"
}

// openAbortWait bounds the aborts of a stopped job's open loads: the
// program exits within it of the signal's job end.
const openAbortWait = 10 * time.Second

// openLeft is what abortOpen did with a stopped job's open loads.
type openLeft struct {
	settled   []dorisio.OpenLoad
	err       error                    // names the loads it could not abort
	committed []dorisio.CommittedTable // what the job committed in this process, the aborts' finds included
}

// abortOpen aborts the loads the job precommitted in this process that no
// commit stage committed (dorisio.AbortOpenLoads): those of bundles that
// finished before the job was stopped or failed. Without it they held
// Doris' running-transaction quota until the precommit timeout (measured:
// 6 PRECOMMITTED after Ctrl-C, while the program said it had aborted them).
func abortOpen(p *beam.Pipeline) openLeft {
	ctx, cancel := context.WithTimeout(context.Background(), openAbortWait)
	defer cancel()
	settled, err := dorisio.AbortOpenLoads(ctx, p)
	return openLeft{settled, err, dorisio.CommittedLoads(p)}
}

// says is what abortOpen did, for the interruption's line.
func (l openLeft) says() string {
	var aborted, committed, nothing int
	for _, s := range l.settled {
		switch {
		case s.Committed:
			committed++
		case s.NothingOpen:
			nothing++
		default:
			aborted++
		}
	}
	what := fmt.Sprintf("the loads in flight were stopped and %s aborted, as Doris confirmed", plural.Count(aborted, "precommitted load"))
	if nothing > 0 {
		what += fmt.Sprintf(" (%d more had nothing open to abort: sent but never begun, or aborted already: by its bundle, or by Doris when its send was cut)", nothing)
	}
	if committed > 0 {
		what += fmt.Sprintf(" (%d more were committed already)", committed)
	}
	if l.err != nil {
		what += "; SOME ARE LEFT OPEN (below)"
	}
	return what
}

// print says on w, after a failed job, what abortOpen aborted and what it
// could not, what the job committed and what a re-run of o does with it:
// a failed job prints no summary, and a re-run that loads the committed
// rows again must not be left to a guess.
func (l openLeft) print(w io.Writer, o *options) {
	if n := len(l.settled); n > 0 {
		fmt.Fprintf(w, "%s: the job failed: %s\n", progName, strings.TrimPrefix(l.says(), "the loads in flight were stopped and "))
	}
	if l.err != nil {
		fmt.Fprintf(w, "%s: %s\n", progName, dorisio.ErrorMessage(l.err))
	}
	loaded, rows, unknownRows := committedSays(l.committed, "the failure")
	fmt.Fprintf(w, "%s: %s; once the cause below is fixed: %s\n", progName, loaded, strings.TrimPrefix(resumeAdvice(o, rows, unknownRows), "nothing was committed: "))
}

// printInterrupted says on w what an interrupted job loaded, that its
// bundles aborted what they precommitted and what abortOpen aborted of
// what finished bundles left (or, in dorisio's words, what could not be
// aborted), and how to resume.
func printInterrupted(w io.Writer, err error, o *options, files fileprogress.Progress, left openLeft) {
	loaded, rows, unknownRows := committedSays(left.committed, "the interruption")
	if o.input != "" {
		p := progressSince(files)
		loaded = fmt.Sprintf("%s in %s loaded (%d of them found loaded by an earlier run), of %s listed", plural.Count(p.LoadedRecords, "record"), plural.Count(p.Loads, "range"), p.AlreadyLoadedRecords, plural.Count(p.Files, "file"))
		loaded += stoppedRangesSay(left.committed, p)
	}
	fmt.Fprintf(w, "%s: interrupted: %s; %s\n", progName, loaded, left.says())
	if left.err != nil {
		fmt.Fprintf(w, "%s: %s\n", progName, dorisio.ErrorMessage(left.err))
	}
	if err != nil {
		if msg := dorisio.ErrorMessage(err); strings.Contains(msg, "[dorisio:") {
			fmt.Fprintf(w, "%s: what the job said as it stopped: %s\n", progName, msg)
		}
	}
	fmt.Fprintf(w, "%s: to resume: %s\n", progName, resumeAdvice(o, rows, unknownRows))
}

// stoppedRangesSay adds to an interrupted --input job's line what its
// progress does not count: the ranges whose loads were stopped before
// their answer came. Doris may have had a range's body whole and loaded
// it after the stop; asked (dorisio.AbortOpenLoads), it says so (counted
// committed by dorisio.CommittedLoads, past the progress' own commits) or
// cannot tell yet (named with their labels). Before, the line said "0
// records in 0 ranges loaded" of a table that then held such a range.
func stoppedRangesSay(ts []dorisio.CommittedTable, p fileprogress.Progress) string {
	var loads, rows int64
	for _, t := range ts {
		loads += t.Loads
		rows += t.Rows
	}
	var says string
	// The progress' commits: the loads answered, less those found loaded
	// by an earlier run (which CommittedLoads does not count).
	if more, moreLoads := rows-(p.LoadedRows-p.AlreadyLoadedRecords), loads-(p.Loads-p.AlreadyLoaded); more > 0 && moreLoads > 0 {
		says = fmt.Sprintf("; %s of %s Doris made visible as the job stopped, as it said when asked", plural.Count(more, "row"), plural.Count(moreLoads, "load"))
	}
	return says + unknownLoadsSay(ts)
}

// committedSays is what a job stopped by what (the interruption, the
// failure) committed, per table, its rows, and the rows of its loads whose
// outcome Doris could not tell.
//
// A load a failed bundle cut, whose outcome Doris could not tell when
// asked (dorisio.AbortOpenLoads asks), is said apart, with its label:
// it may be in the table. Those Doris said it made visible are counted
// committed.
func committedSays(ts []dorisio.CommittedTable, what string) (string, int64, int64) {
	var loads, rows, unknownRows int64
	var per []string
	for _, t := range ts {
		loads += t.Loads
		rows += t.Rows
		if t.Loads > 0 {
			per = append(per, fmt.Sprintf("%s.%s %s, %s", t.Database, t.Table, plural.Count(t.Loads, "load"), plural.Count(t.Rows, "row")))
		}
		unknownRows += t.UnknownRows
	}
	says := "no load was committed"
	if loads > 0 {
		says = fmt.Sprintf("%s of %s committed before %s stay in the tables (%s)", plural.Count(loads, "load"), plural.Count(rows, "row"), what, strings.Join(per, "; "))
	}
	if u := unknownLoadsSay(ts); u != "" {
		if loads == 0 {
			says = "no load is known to be committed"
		}
		says += u
	}
	return says, rows, unknownRows
}

// unknownLoadsSay is what committedSays adds of ts' loads whose outcome
// Doris could not tell, naming their labels ("" when there are none).
func unknownLoadsSay(ts []dorisio.CommittedTable) string {
	var rows int64
	var labels []string
	for _, t := range ts {
		rows += t.UnknownRows
		for _, l := range t.UnknownLabels {
			labels = append(labels, t.Database+"."+t.Table+" "+l)
		}
	}
	if len(labels) == 0 {
		return ""
	}
	return fmt.Sprintf("; %s (%s) whose outcome Doris could not tell may be in the tables too (labels %s)",
		plural.Count(len(labels), "load"), plural.Count(rows, "row"), strings.Join(labels, ", "))
}
