package fileload

import (
	"context"
	"fmt"
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
	loaded []chan struct{} // closed once jobs[i] loaded
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

// Side by side, a file's ranges still become visible in file order: a
// range's body holds its last byte until the previous range loaded (a body
// from memory waits for it to end), and is not sent when that range ended
// without loading. So what a range Doris refuses leaves loaded is the
// ranges before it, and the fix its error asks for, which may shift the
// later ranges' offsets and so their labels, loads each row once. Before,
// later ranges loaded while a refused one was held at the FE, and the
// re-run after the fix loaded them again.

// hold is the hold of the body of the range of path about to start
// (streamload.NewHeldFileBody): it waits for the previous range to load.
func (o *rangeOpens) hold(ctx context.Context, path string) func() error {
	if len(o.jobs) == 0 {
		return nil
	}
	prev, loaded := o.jobs[len(o.jobs)-1], o.loaded[len(o.loaded)-1]
	return func() error {
		select {
		case <-loaded:
			return nil
		case <-prev.Ended():
			select {
			case <-loaded:
				return nil
			default:
			}
			return fmt.Errorf("dorisio.WriteFiles: file %s: the range before this one did not load, so this one is not sent (a file's ranges become visible in file order)", path)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// lastOrder is the order of the last range started: a range sent from
// memory takes it, so that it waits for that range to end and is not sent
// once the bundle failed.
func (o *rangeOpens) lastOrder() string {
	return o.jobs[len(o.jobs)-1].Order
}

// started notes j, the range next was (or, for a body not read from the
// file, was not) called for, as started; its Loaded, set before, is
// wrapped to say it loaded (hold).
func (o *rangeOpens) started(j *sink.LoadJob) {
	ch, inner, once := make(chan struct{}), j.Loaded, &sync.Once{}
	j.Loaded = func(r sink.CommitResult) {
		if inner != nil {
			inner(r)
		}
		once.Do(func() { close(ch) })
	}
	o.loaded = append(o.loaded, ch)
	o.n++
	o.jobs = append(o.jobs, j)
	if o.pend != nil {
		o.last, o.opened, o.pend = j, o.pend, nil
	}
}
