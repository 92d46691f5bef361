package dorisio

import (
	"fmt"
	"strings"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streambatch"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// Write loads the elements of col into Doris and returns a PCollection of
// CommitResult, one per load, once its rows are committed. The results are
// in the global window, whatever the input's windowing.
//
// Elements may be structs (one row each, fields mapped by `doris:"col"`,
// then `json` tags, then names; an untagged embedded struct's fields are
// columns, and an embedded pointer to a struct is refused; a string field
// tagged `doris:",table"` routes each row to a table: see Routing in
// docs/guide.md), []byte or
// string holding one or many complete pre-encoded rows (the fast path), or
// Row to route pre-encoded rows to a table each. With ExactlyOnce (the default) every load is a
// two-phase-commit Stream Load precommitted by the bundle that produced its
// rows and committed after a Reshuffle; see the package doc.
//
// Write panics at construction on an invalid Config, option or element
// type, naming what is wrong.
func Write(s beam.Scope, cfg Config, col beam.PCollection, opts ...WriteOption) beam.PCollection {
	s = s.Scope("dorisio.Write")
	w, err := newWrite(s, cfg, col, opts)
	if err == nil && w.Stream != nil {
		err = stateRunner()
	}
	if err != nil {
		panic("dorisio.Write: " + err.Error())
	}
	results := w.Results(s, col)
	if w.Group != nil || col.Type().Type() == sink.RowType {
		// Loads a re-run finds by label: say so if Doris keeps fewer
		// (label_cap.go).
		sink.WatchLabelCap(s, col, w.Write.Conn, w.Write.DB, cfg.LabelPrefix, results)
	}
	return results
}

func newWrite(s beam.Scope, cfg Config, col beam.PCollection, opts []WriteOption) (*sink.Write, error) {
	conn := newConnSpec(cfg) // once: a Config.Password gets one in-process handle
	if err := cfg.validate(conn); err != nil {
		return nil, err
	}
	o := newWriteOptions(opts)
	if !col.IsValid() {
		o.fail("invalid input PCollection")
		return nil, fmt.Errorf("%s", strings.Join(o.errs, "; "))
	}
	explicit := o.gave("the delivery")
	if !explicit { // an explicit delivery is kept
		o.defaultDelivery(col, cfg.LabelPrefix != "")
	}
	streaming := o.streaming(col)
	unbounded, known := sink.IsUnbounded(col)
	o.validate(mode{streaming: streaming, unbounded: unbounded, prefix: cfg.LabelPrefix != ""})
	if len(o.errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(o.errs, "; "))
	}
	t := col.Type().Type()
	enc, err := sink.NewElemEncoder(t, &o.Options)
	if err != nil {
		return nil, err
	}
	if o.Format.Columnar() {
		o.FieldTypes = enc.FieldTypes()
	}
	if cfg.Table == "" && !enc.Routes() {
		return nil, fmt.Errorf("Config.Table: empty; set it, route typed rows with a string field tagged `doris:\",table\"`, or route pre-encoded rows with dorisio.Row")
	}
	headers, err := sink.LoadHeaders(t, enc, &o.Options)
	if err != nil {
		return nil, err
	}
	prefix := cfg.LabelPrefix
	if prefix == "" {
		prefix = sink.DefaultPrefix()
	} else {
		o.warnRerunLoadsAgain(col, cfg.LabelPrefix, explicit)
	}
	if streaming {
		sink.DisablePrismSplits()
	}
	w := sink.NewWrite(sink.Plan{
		Conn: conn, DB: cfg.Database, Table: cfg.Table, LabelPrefix: prefix, RunID: sink.PipelineRunID(s),
		Headers: headers, Opts: o.Options, Elem: t, Streaming: streaming, Unbounded: unbounded, BoundsKnown: known,
	})
	if streaming {
		w.Stream = streambatch.New(conn, cfg.Database, prefix, w.Write.RunID, headers, &o.Options)
	}
	return w, nil
}
