// Package flightread is the engine of dorisio.Read: a table read through
// Doris' Arrow Flight SQL, split by tablets (docs/protocol.md §14).
//
//	Impulse ─▶ PlanFn ─▶ Reshuffle ─▶ ReadFn ─▶ elements of the read's type
//	           │ _schema, SHOW FRONTENDS, _query_plan:   per split: Execute on the FE
//	           │ tablets → BEs → splits of a few         (one session per DoFn instance,
//	           │ tablets of one BE                       one query at a time), DoGet
//	                                                     every endpoint, decode, emit
//
// The HTTP calls of the plan are the Stream Load client's
// (internal/streamload), the connection and password layer is Write's
// (internal/conn), and struct fields map to columns by Write's rule
// (internal/colname).
package flightread

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	register.DoFn3x1[context.Context, []byte, func(Split), error](&PlanFn{})
	register.DoFn4x1[context.Context, beam.EventTime, Split, func(beam.EventTime, beam.X), error](&ReadFn{})
	register.Emitter2[beam.EventTime, beam.X]()
	register.Emitter1[Split]()
	beam.RegisterType(splitType)
	beam.RegisterType(RecordType)
	beam.RegisterCoder(RecordType, EncodeRecord, DecodeRecord)
}

// Expand adds the read's stages to s and returns the PCollection of the
// read's element type. The Reshuffle spreads the splits over workers
// (the plan emits them from one).
func Expand(s beam.Scope, r Read) beam.PCollection {
	splits := beam.ParDo(s, &PlanFn{Read: r}, beam.Impulse(s))
	splits = beam.Reshuffle(s, splits)
	return beam.ParDo(s, &ReadFn{Read: r}, splits, beam.TypeDefinition{Var: beam.XType, T: r.Elem.T})
}
