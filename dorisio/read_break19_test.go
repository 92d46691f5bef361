package dorisio

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/flightread"
)

// A panic on the bundle's goroutine while a spilled split is emitted (a
// field's UnmarshalText decoding the spilled batches, or a DoFn fused
// after the read panicking on a row) fails the bundle; the DoFn's
// Teardown (or its next bundle) then leaves no spill file of that split
// behind and no session open.
func TestAPanicWhileASpilledSplitIsEmittedLeavesNoSpillFile(t *testing.T) {
	for _, tt := range []struct {
		name string
		elem reflect.Type
		emit func(v beam.X)
	}{
		{"UnmarshalText", reflect.TypeOf(idPanicky{}), func(beam.X) {}},
		{"downstream", reflect.TypeOf(idOnly{}), func(v beam.X) {
			if v.(idOnly).ID == 1234 {
				panic("downstream: cannot take 1234")
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := idTable(t, 4000)
			dir := t.TempDir()
			t.Setenv("TMPDIR", dir)
			r, err := newRead(configFor(srv, "ids"), Query{TabletsPerSplit: 2}, tt.elem, []ReadOption{WithReadBufferBytes(1), WithReadSplitsInFlight(4)})
			if err != nil {
				t.Fatal(err)
			}
			var splits []flightread.Split
			if err := (&flightread.PlanFn{Read: r}).ProcessElement(context.Background(), nil, func(sp flightread.Split) { splits = append(splits, sp) }); err != nil {
				t.Fatal(err)
			}
			fn := &flightread.ReadFn{Read: r}
			if err := fn.Setup(); err != nil {
				t.Fatal(err)
			}
			panicked := func() (p any) {
				defer func() { p = recover() }()
				emit := func(_ beam.EventTime, v beam.X) { tt.emit(v) }
				for _, sp := range splits {
					if err := fn.ProcessElement(context.Background(), 0, sp, emit); err != nil {
						t.Fatalf("ProcessElement: %v", err)
					}
				}
				if err := fn.FinishBundle(context.Background(), emit); err != nil {
					t.Fatalf("FinishBundle: %v", err)
				}
				return nil
			}()
			if panicked == nil || !containsText(fmt.Sprint(panicked), "1234") {
				t.Fatalf("the bundle did not panic on row 1234: %v", panicked)
			}
			fn.Teardown()
			wantNoSpillFiles(t, dir)
			if st := srv.FlightStats(); st.OpenSessions != 0 {
				t.Errorf("server %+v after Teardown: want every session closed", st)
			}
		})
	}
}

func containsText(s, sub string) bool {
	return len(sub) == 0 || len(s) >= len(sub) && (s[:len(sub)] == sub || containsText(s[1:], sub))
}
