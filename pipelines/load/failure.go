package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

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
	var (
		usage *usageError
		write *writeRefused
		job   *jobFailed
	)
	switch {
	case err == nil:
		return exitOK
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
		fmt.Fprintf(w, "%s: the job failed: %s\n", progName, ours)
		if ours != full {
			fmt.Fprintf(w, "%s: run again with -v for the runner's log and its full error (plan, stack)\n", progName)
		}
		return exitFailed
	}
	fmt.Fprintf(w, "%s: %v\n", progName, err)
	return exitFailed
}
