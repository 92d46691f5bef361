package fileload

import (
	"context"
	"os"
	"slices"
	"sync"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// A file's ranges load in file order where the table keeps one row per key
// (a later row of the file must land after an earlier one: docs/design.md,
// "Order"). A DUPLICATE KEY table keeps every row, so there the ranges load
// side by side, up to LoadsInFlight: one load is parsed by one core of one
// BE, and between two loads the stream is idle while the reply, the FE's
// redirect and the next load's headers go back and forth.

// dupKeys is the _schema keysType of a DUPLICATE KEY table.
const dupKeys = "DUP_KEYS"

// keyModel is the table's key model, asked once per DoFn instance beside
// its first bundle's reading (a file's second range is the first load that
// needs it).
type keyModel struct {
	done chan struct{}
	dup  bool // a DUPLICATE KEY table: ranges load side by side
}

// askKeys asks the FE for the key model of db.table. An FE that does not
// say (no SELECT privilege, an old FE) keeps the ranges in order.
func askKeys(ctx context.Context, c *streamload.Client, db, table string) *keyModel {
	k := &keyModel{done: make(chan struct{})}
	go func() {
		defer close(k.done)
		if c == nil || table == "" {
			return
		}
		keys, err := c.TableKeysType(ctx, db, table)
		k.dup = err == nil && keys == dupKeys
	}()
	return k
}

// sideBySide reports whether a file's ranges may load side by side.
func (k *keyModel) sideBySide() bool {
	if k == nil {
		return false
	}
	<-k.done
	return k.dup
}

// rangeOpens orders the opening of a file's range bodies: a range's body
// passes its file check only after the previous range's body did (or that
// load ended), and a range that finds the file changed waits for every
// earlier range to end before it says what of the file is loaded. So,
// whether the ranges load one after another or side by side, what the
// error calls loaded is a prefix of the file and exact (fileDone).
type rangeOpens struct {
	n      int             // ranges started
	jobs   []*sink.LoadJob // the ranges started, in file order
	last   *sink.LoadJob   // the last range started whose body is checked (read from the file)
	opened chan struct{}   // closed once last's body passed its first check
	pend   chan struct{}   // next's channel for the range about to start
}

// next wraps check, the file check of the body of the range about to
// start (started is called next with its job).
func (o *rangeOpens) next(ctx context.Context, check func(os.FileInfo) error) func(os.FileInfo) error {
	prev, prevOpened, earlier := o.last, o.opened, slices.Clone(o.jobs)
	opened := make(chan struct{})
	o.pend = opened
	var once sync.Once
	return func(fi os.FileInfo) error {
		defer once.Do(func() { close(opened) })
		if prev != nil {
			select {
			case <-prevOpened:
			case <-prev.Ended():
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		err := check(fi)
		if err == nil {
			return nil
		}
		for _, e := range earlier {
			select {
			case <-e.Ended():
			case <-ctx.Done():
				return err
			}
		}
		return check(fi) // what is loaded, now that the earlier ranges have ended
	}
}

// started notes j, the range next was (or, for a body not read from the
// file, was not) called for, as started.
func (o *rangeOpens) started(j *sink.LoadJob) {
	o.n++
	o.jobs = append(o.jobs, j)
	if o.pend != nil {
		o.last, o.opened, o.pend = j, o.pend, nil
	}
}
