package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/internal/plural"
)

// Before a run, the transactions an earlier run left open: a job killed
// with SIGKILL (or whose machine died) cannot abort what it precommitted,
// and those transactions hold Doris' running-transaction quota until the
// precommit timeout (an hour by default). Measured before: a kill -9 of a
// default-delivery job left 3 PRECOMMITTED, and the re-run did not mention
// them. With a --label-prefix the program is the job, so it aborts them
// (--abort-lingering, on by default with a prefix) and says how many;
// without one, each run had a fresh prefix and another live job may own
// them, so it only names them and how to abort them. The cleanup spares a
// prefix's stream batches (a replay of the same stream adopts them by
// label), so what it leaves open is named too: before, a killed --stream
// run's precommitted batches stayed open for the precommit timeout, unnamed
// by any later run.

// lingeringWait bounds the listing and aborts before the job.
const lingeringWait = time.Minute

// settleLingering aborts (with a --label-prefix) or names (without) the
// open transactions of earlier runs, on w. A server that cannot list
// transactions (no ADMIN) is said once, and the job goes on.
//
// With a prefix it also asks whether Doris may have forgotten labels of
// earlier runs (dorisio.LabelMemory), and returns sayMemory, which waits
// for the answer and says it on w. The job need not wait for it: the
// question lists every label of the database, which took longer than the
// aborts (6-13 of the 12-20 ms before a small job's start on doris-local
// holding 2,000 labels; more on a busy FE), and its answer only warns.
// The caller says it beside the job, as soon as it comes. The FE answers
// it before the job's first load ends, so what it counts are the earlier
// runs' loads.
func settleLingering(ctx context.Context, cfg dorisio.Config, o *options, w io.Writer) (sayMemory func()) {
	sayMemory = func() {}
	if o.labelPrefix != "" {
		memory := make(chan string, 1)
		// Its own bound: the aborts' ends when this function returns.
		askCtx, askDone := context.WithTimeout(ctx, lingeringWait)
		go func() {
			defer askDone()
			line, err := dorisio.LabelMemory(askCtx, cfg)
			if err != nil {
				line = "" // listing refused: said by the aborts' listing, or by the job
			}
			memory <- line
		}()
		sayMemory = sync.OnceFunc(func() {
			if line := <-memory; line != "" {
				fmt.Fprintf(w, "%s: before this run: %s\n", progName, line)
			}
		})
	}
	ctx, cancel := context.WithTimeout(ctx, lingeringWait)
	defer cancel()
	if o.labelPrefix != "" {
		// Listed first: when the prefix holds no open transaction (the
		// usual case) there is nothing to abort, and one request is made
		// instead of a listing to abort from and another of what is kept.
		var open []dorisio.OpenLoad
		if o.abortLingering {
			var err error
			if open, err = dorisio.OpenTransactions(ctx, cfg, o.labelPrefix+":"); err != nil {
				sayLingeringErr(w, err)
			}
		}
		if len(open) > 0 {
			aborted, err := dorisio.AbortLingering(ctx, cfg)
			if err != nil {
				sayLingeringErr(w, err)
			}
			if len(aborted) > 0 {
				fmt.Fprintf(w, "%s: aborted %s an earlier run with --label-prefix %s left open (%s): they held Doris' running-transaction quota; their rows were never visible\n",
					progName, plural.Count(len(aborted), "transaction"), shown(o.labelPrefix), someLabels(aborted))
			}
			if kept, err := dorisio.OpenTransactions(ctx, cfg, o.labelPrefix+":"); err == nil && len(kept) > 0 {
				batches, plain := splitStreamBatches(kept, o.labelPrefix)
				if len(batches) > 0 {
					fmt.Fprintf(w, "%s: %s an earlier run with --label-prefix %s left open %s not aborted (%s): stream batches, kept because a replay of the same stream (the same --stream-start, --duration, --rate, --flush-interval and --shards) adopts and commits them, or loads still in flight. They hold Doris' running-transaction quota until its precommit timeout; if no such replay will come, abort each by its id: %s\n",
						progName, plural.Count(len(batches), "transaction"), shown(o.labelPrefix), isAre(len(batches)), someLabels(batches), abortByID(cfg))
				}
				if len(plain) > 0 {
					fmt.Fprintf(w, "%s: %s of an earlier run with --label-prefix %s %s still in flight in Doris (%s): plain loads, which Doris ends by itself within their load timeout, visible when their whole body arrived; this run finds such a load under its label and does not load it again\n",
						progName, plural.Count(len(plain), "load"), shown(o.labelPrefix), isAre(len(plain)), someLabels(plain))
				}
			}
		}
		return sayMemory
	}
	open, err := dorisio.OpenTransactions(ctx, cfg, defaultPrefixStart)
	if err != nil {
		sayLingeringErr(w, err)
		return sayMemory
	}
	if len(open) == 0 {
		return sayMemory
	}
	fmt.Fprintf(w, "%s: %s that earlier runs without a --label-prefix precommitted %s still open (%s): they hold Doris' running-transaction quota until its precommit timeout. If no such run is alive, abort each by its id: %s; give jobs a --label-prefix, and a re-run aborts them itself\n",
		progName, plural.Count(len(open), "transaction"), isAre(len(open)), someLabels(open), abortByID(cfg))
	return sayMemory
}

// splitStreamBatches splits the open transactions of prefix that the
// cleanup keeps into stream batches (two-phase, "<prefix>:s:" labels,
// which a replay adopts) and plain loads (grouped parts "<prefix>:g:",
// identity loads "<prefix>:id:"): an open one of those is a load still in
// flight, a killed run's last, which Doris ends by itself within the
// load's timeout. Before, those were called stream batches holding the
// quota until the precommit timeout, with the advice to abort them, of a
// grouped job that had no stream.
func splitStreamBatches(kept []dorisio.OpenLoad, prefix string) (batches, plain []dorisio.OpenLoad) {
	for _, l := range kept {
		if strings.HasPrefix(l.Label, prefix+":s:") {
			batches = append(batches, l)
		} else {
			plain = append(plain, l)
		}
	}
	return batches, plain
}

// abortByID is the command that aborts an open transaction by its id.
func abortByID(cfg dorisio.Config) string {
	return fmt.Sprintf("curl -u USER -X PUT -H 'txn_id: ID' -H 'txn_operation: abort' %s/api/%s/_stream_load_2pc", cfg.FEs[0], cfg.Database)
}

// defaultPrefixStart starts every label prefix dorisio.Write draws when
// Config.LabelPrefix is empty.
const defaultPrefixStart = "dorisio-"

func sayLingeringErr(w io.Writer, err error) {
	if errors.Is(err, dorisio.ErrAuth) || strings.Contains(strings.ToLower(err.Error()), "unknown database") {
		// The job's first load fails with the same words (a database that
		// does not exist: Doris' "Unknown database 'x'" here) and its next
		// step: said once, there.
		return
	}
	if errors.Is(err, dorisio.ErrListingUnsupported) {
		fmt.Fprintf(w, "%s: cannot list the transactions earlier runs may have left open (SHOW TRANSACTION needs ADMIN); any such expire at Doris' precommit timeout\n", progName)
		return
	}
	fmt.Fprintf(w, "%s: looking for transactions earlier runs left open: %s\n", progName, dorisio.ErrorMessage(err))
}

// someLabels names up to five loads by label and txn id.
func someLabels(ls []dorisio.OpenLoad) string {
	var names []string
	for i, l := range ls {
		if i == 5 {
			names = append(names, fmt.Sprintf("and %d more", len(ls)-5))
			break
		}
		names = append(names, fmt.Sprintf("%s txn %d", l.Label, l.TxnID))
	}
	return strings.Join(names, ", ")
}

// isAre is the verb for n transactions: "is" for one, "are" otherwise.
func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
