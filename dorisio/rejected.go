package dorisio

// Rejected rows (WithRejectedRows): a row that Write's own checks or Doris
// refuse is reported, not a reason to fail its bundle. Each load's
// CommitResult carries the rows refused from it in Rejected, so the rows
// travel with the load that they were part of: kept exactly when that load
// is kept (a failed bundle attempt's results are discarded with its loads),
// in every delivery mode, through the same registered DoFns. RejectedRows
// turns the results into a PCollection of RejectedRow, one per row.
//
// Where the rows come from:
//   - Write's checks of struct fields (value_check.go) refuse a row before
//     it is sent: it never reaches Doris, and its Label is empty.
//   - A load Doris fails for data quality has its refused rows named by
//     Doris' error log and the rest loaded as one load (internal/sink:
//     isolate.go, refused_log.go); rows no log names are found by probing.
//     Every good row is loaded once; every refused row is reported with
//     Doris' reason.

import (
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	register.Function2x0(rejectedOf)
	register.Emitter1[RejectedRow]()
	beam.RegisterType(reflect.TypeOf((*RejectedRow)(nil)).Elem())
}

// WithRejectedRows makes rows that are refused, by Write's checks of struct
// fields (see Values in docs/guide.md) or by Doris for data quality
// (a value too long for its VARCHAR, a conversion strict mode refuses,
// NULL in a NOT NULL column, a line that is not UTF-8, a wrong column
// count), part of the output instead of failing the bundle: each load's
// CommitResult.Rejected lists them, and RejectedRows collects them. The
// other rows of a refused load are loaded exactly once, in 1 + ⌈k/51⌉ more
// loads for k refused rows (see Rejected rows in docs/guide.md). Default
// off: a refused row fails its bundle, naming it, as in the Flink
// connector. Within WithMaxFilterRatio, Doris filters rows without failing
// the load; those are counted in CommitResult.FilteredRows, not listed. A
// value Doris cannot convert is a refused row only in strict mode
// (WithStrictMode; on by default for WriteFiles), else Doris stores NULL.
func WithRejectedRows() LoadOption {
	return forLoads("WithRejectedRows()", func(o *writeOptions) { o.claim("WithRejectedRows()"); o.Rejected = true })
}

// RejectedRows returns the rows refused by the Write or WriteFiles whose
// results are given, built with WithRejectedRows: one RejectedRow each, in
// the results' windowing.
func RejectedRows(s beam.Scope, results beam.PCollection) beam.PCollection {
	s = s.Scope("dorisio.RejectedRows")
	return beam.ParDo(s, rejectedOf, results)
}

// rejectedOf emits the rows refused from one load.
func rejectedOf(r CommitResult, emit func(RejectedRow)) {
	for _, row := range r.Rejected {
		emit(row)
	}
}
