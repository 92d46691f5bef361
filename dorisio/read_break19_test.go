package dorisio

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
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
			fn, splits := readFnOf(t, configFor(srv, "ids"), Query{TabletsPerSplit: 2}, tt.elem, WithReadBufferBytes(1), WithReadSplitsInFlight(4))
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
			if panicked == nil || !strings.Contains(fmt.Sprint(panicked), "1234") {
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

// Untyped: a Record read of every type (ARRAY, MAP, STRUCT, JSON, LARGEINT,
// DECIMAL, DATETIME(3/6) among them) with 16 splits, 8 in flight and a
// buffer that spills part of them, gives every record once and each
// value as a read of one split at a time gives it; and the struct read of
// the same table agrees with what was written. Run with -race: the
// decoders the splits share must hold no state a batch writes.
func TestRecordsAndNestedTypesReadWithSplitsInFlightAreExactAndOnce(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(allTypesDDL, "all")))
	rows := writeAllTypes(t, srv, "all", 3000)
	one, _, err := readAll(t, configFor(srv, "all"), Query{TabletsPerSplit: 1}, reflect.TypeOf(Record{}), WithReadSplitsInFlight(1))
	if err != nil {
		t.Fatal(err)
	}
	many, res, err := readAll(t, configFor(srv, "all"), Query{TabletsPerSplit: 1}, reflect.TypeOf(Record{}), WithReadSplitsInFlight(8), WithReadBufferBytes(48<<10))
	if err != nil {
		t.Fatal(err)
	}
	values := func(r Record) string { return fmt.Sprintf(" %#v", r.Values) }
	want, got := recordLines(t, one, values), recordLines(t, many, values)
	if len(want) != len(rows) || len(got) != len(rows) || len(many) != len(rows) {
		t.Fatalf("%d records one split at a time, %d (%d distinct) 8 at a time, want %d", len(one), len(many), len(got), len(rows))
	}
	differ := 0
	for id, w := range want {
		if got[id] != w {
			if differ++; differ <= 3 {
				t.Errorf("record %d 8 splits at a time:\n%s\none at a time:\n%s", id, got[id], w)
			}
		}
	}
	if differ > 0 {
		t.Errorf("%d of %d records differ", differ, len(want))
	}
	if n := counter(res, "read_spilled_batches"); n == 0 {
		t.Errorf("no batch spilled: the buffer did not bind")
	} else {
		t.Logf("%d batches spilled", n)
	}
	typed, _, err := readAll(t, configFor(srv, "all"), Query{TabletsPerSplit: 1}, reflect.TypeOf(allTypes{}), WithReadSplitsInFlight(16), WithReadBufferBytes(48<<10))
	if err != nil {
		t.Fatal(err)
	}
	wantSameRows(t, typed, rows)
	if st := srv.FlightStats(); st.OpenSessions != 0 || st.MaxQueriesPerSession != 1 {
		t.Errorf("server %+v: want every session closed, one query at a time on each", st)
	}
}

// A table whose tablets are on 3 BEs, read 1 tablet a split with 4 in
// flight: every row once, each split's result fetched from its BE, one
// query at a time on a session and every session closed. And a DoFn
// given, in one bundle, splits of two FEs (two servers), one at a time:
// a session is reused only for a split of its own FE (the other FE
// refuses its token), so every split reads whole on both.
func TestSplitsOnSeveralBEsAndFEsReadEveryRowOnce(t *testing.T) {
	srv, rows := idTableOf(t, "demo.ids(id BIGINT NOT NULL, name VARCHAR(16)) DISTRIBUTED BY HASH(id) BUCKETS 12", 6000, doristest.WithBackends(3))
	got, _, err := readAll(t, configFor(srv, "ids"), Query{TabletsPerSplit: 1}, reflect.TypeOf(idOnly{}), WithReadSplitsInFlight(4))
	if err != nil {
		t.Fatal(err)
	}
	wantSameRows(t, got, rows)
	if st := srv.FlightStats(); st.TabletQueries != 12 || st.Fetches != 12 || st.OpenSessions != 0 || st.MaxQueriesPerSession != 1 {
		t.Errorf("server %+v: want 12 splits fetched, one query at a time on a session, every session closed", st)
	}

	other, more := idTable(t, 3000)
	fn, splits := readFnFor(t, configFor(srv, "ids"), Query{TabletsPerSplit: 3})
	_, otherSplits := readFnFor(t, configFor(other, "ids"), Query{TabletsPerSplit: 2})
	if splits[0].FE == otherSplits[0].FE {
		t.Fatalf("both servers' splits name FE %s", splits[0].FE)
	}
	var mixed []flightread.Split
	for i := range max(len(splits), len(otherSplits)) {
		if i < len(splits) {
			mixed = append(mixed, splits[i])
		}
		if i < len(otherSplits) {
			mixed = append(mixed, otherSplits[i])
		}
	}
	for _, inFlight := range []int{1, 3} {
		fn.SplitsInFlight = inFlight
		if err := fn.Setup(); err != nil {
			t.Fatal(err)
		}
		for b := 0; b < 2; b++ {
			got, err := bundle(context.Background(), fn, mixed, nil)
			if err != nil {
				t.Fatalf("%d in flight, bundle %d: %v", inFlight, b, err)
			}
			wantSameRows(t, got, append(append([]idOnly{}, rows...), more...))
		}
	}
	fn.Teardown()
	for _, s := range []*doristest.Server{srv, other} {
		if st := s.FlightStats(); st.OpenSessions != 0 || st.MaxQueriesPerSession != 1 {
			t.Errorf("server %+v: want every session closed, one query at a time on each", st)
		}
	}
}
