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
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/internal/fileprogress"
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

// jobMetrics returns pr's metrics; ok is false when there are none: the
// universal runner's result of a cancelled job holds none, and its Metrics
// method then dereferences nil.
func jobMetrics(pr beam.PipelineResult) (m metrics.Results, ok bool) {
	if pr == nil {
		return m, false
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return pr.Metrics(), true
}

// resumeAdvice says how to load what an interrupted job did not.
func resumeAdvice(o *options) string {
	switch {
	case o.stream && o.labelPrefix != "" && o.streamStart != 0:
		return fmt.Sprintf("run the same command again (--label-prefix %s, --stream-start %d, same flags): the stream is replayed and its batches found under their labels are not loaded again", shown(o.labelPrefix), o.streamStart)
	case o.stream:
		return "the rows committed stay; a re-run makes a new stream; for a re-run that resumes, give --stream-start (the first row's event time, Unix ms) and --label-prefix, and run again with the same values"
	case o.labelPrefix != "" && (o.input != "" || o.delivery == "grouped"):
		return fmt.Sprintf("run the same command again (--label-prefix %s, same flags): what is loaded is found under its labels and not loaded again", shown(o.labelPrefix))
	case o.input != "":
		return "without --label-prefix each run has its own labels: a re-run loads every file again; give --label-prefix to make a re-run resume"
	}
	return "the rows committed stay; a re-run generates and loads every row again (only --input, or --delivery grouped, with a --label-prefix resume)"
}

// openAbortWait bounds the aborts of a stopped job's open loads: the
// program exits within it of the signal's job end.
const openAbortWait = 10 * time.Second

// openLeft is what abortOpen did with a stopped job's open loads.
type openLeft struct {
	settled []dorisio.OpenLoad
	err     error // names the loads it could not abort
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
	return openLeft{settled, err}
}

// says is what abortOpen did, for the interruption's line.
func (l openLeft) says() string {
	var aborted, committed int
	for _, s := range l.settled {
		if s.Committed {
			committed++
		} else {
			aborted++
		}
	}
	what := fmt.Sprintf("the loads in flight were stopped and %d precommitted loads aborted", aborted)
	if committed > 0 {
		what += fmt.Sprintf(" (%d more were committed already)", committed)
	}
	if l.err != nil {
		what += "; SOME ARE LEFT OPEN (below)"
	}
	return what
}

// print says on w, after a failed job, what abortOpen aborted and what it
// could not.
func (l openLeft) print(w io.Writer) {
	if n := len(l.settled); n > 0 {
		fmt.Fprintf(w, "%s: the job failed: %s\n", progName, strings.TrimPrefix(l.says(), "the loads in flight were stopped and "))
	}
	if l.err != nil {
		fmt.Fprintf(w, "%s: %s\n", progName, dorisio.ErrorMessage(l.err))
	}
}

// printInterrupted says on w what an interrupted job loaded, that its
// bundles aborted what they precommitted and what abortOpen aborted of
// what finished bundles left (or, in dorisio's words, what could not be
// aborted), and how to resume.
func printInterrupted(w io.Writer, pr beam.PipelineResult, err error, o *options, files fileprogress.Progress, left openLeft) {
	loaded := "the rows committed before the interruption stay in the tables"
	if o.input != "" {
		p := progressSince(files)
		loaded = fmt.Sprintf("%d records in %d ranges loaded (%d of them found loaded by an earlier run), of %d files listed", p.LoadedRecords, p.Loads, p.AlreadyLoadedRecords, p.Files)
	} else if m, ok := jobMetrics(pr); ok {
		var commits int64
		for _, r := range m.Query(func(r metrics.SingleResult) bool { return r.Namespace() == "dorisio" && r.Name() == "commits" }).Counters() {
			commits += r.Result()
		}
		loaded = fmt.Sprintf("%d loads committed", commits)
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
	fmt.Fprintf(w, "%s: to resume: %s\n", progName, resumeAdvice(o))
}
