package dorisio

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// Audit is embedded in rows, by value and by pointer.
type Audit struct {
	At time.Time `doris:"at"`
	By string    `doris:"by"`
}

type auditedByPointer struct {
	ID int64 `doris:"id"`
	*Audit
}

// An embedded *Audit is refused where the pipeline is built, naming the
// field and both ways out, by Write in every format and by Read: the
// fields of an embedded struct are columns, as in encoding/json, but an
// embedded pointer's were not; it was one column named "Audit", so CSV
// was refused as "an ARRAY/MAP/STRUCT/JSON value" (use WithFormat(JSON)),
// a JSON load failed at Setup suggesting WithAddColumns, and with
// WithCreateTable or WithAddColumns the table got a JSON column "Audit"
// instead of at and by.
func TestAnEmbeddedPointerToAStructIsRefusedAtConstruction(t *testing.T) {
	cfg := Config{FEs: []string{"http://fe:8030"}, User: "u", Database: "demo", Table: "t"}
	construct := func(build func(s beam.Scope)) (msg string) {
		defer func() { msg = fmt.Sprint(recover()) }()
		_, s := beam.NewPipelineWithRoot()
		build(s)
		return ""
	}
	const want = "field auditedByPointer.Audit embeds *Audit"
	const ways = "embed Audit for its fields as columns, or tag the field (`doris:\"audit\"`) for one JSON column"
	for _, f := range []Format{CSV, JSON, Arrow} {
		msg := construct(func(s beam.Scope) {
			Write(s, cfg, beam.Create(s, auditedByPointer{ID: 1}), WithFormat(f))
		})
		if !strings.Contains(msg, want) || !strings.Contains(msg, ways) {
			t.Errorf("Write %s: %q, want it to contain %q and %q", f, msg, want, ways)
		}
	}
	msg := construct(func(s beam.Scope) {
		Read(s, cfg, Query{}, reflect.TypeOf(auditedByPointer{}))
	})
	if !strings.Contains(msg, want) || !strings.Contains(msg, ways) {
		t.Errorf("Read: %q, want it to contain %q and %q", msg, want, ways)
	}
}

func init() { beam.RegisterType(reflect.TypeOf(auditedByPointer{})) }
