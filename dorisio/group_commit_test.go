package dorisio

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

const uniqueEventsDDL = "demo.%s(id BIGINT NOT NULL, name VARCHAR(16)) UNIQUE KEY(id)"

// Group commit into a UNIQUE KEY table whose loads lose their answers (one
// applied, one cut mid-body and so not applied): the loads go without a
// label, the lost ones are resent, and every key is in the table once.
func TestGroupCommitIntoAUniqueTableResendsLostLoadsAndKeepsEveryKeyOnce(t *testing.T) {
	for _, mode := range []GroupCommitMode{GroupCommitSync, GroupCommitAsync} {
		t.Run(string(mode), func(t *testing.T) {
			srv := doristest.NewServer(doristest.WithTable(fmt.Sprintf(uniqueEventsDDL, "events")),
				doristest.WithGroupCommitInterval(20*time.Millisecond))
			applied := srv.Inject(doristest.Fault{Kind: doristest.LoseReply, Endpoint: doristest.EndpointLoad, Count: 1})
			cut := srv.Inject(doristest.Fault{Kind: doristest.ResetMidBody, Endpoint: doristest.EndpointLoad, Count: 1})
			evs := events(600, shortName)
			q, err := runPipeline(t, func(s beam.Scope) {
				Write(s, configFor(srv, "events"), beam.CreateList(s, evs), WithDelivery(GroupCommit), WithGroupCommitMode(mode),
					WithMaxBatchRows(50), WithRetry(fastRetry))
			})
			srv.Close() // commits the groups still waiting (async_mode answers before its group commits)
			if err != nil {
				t.Fatal(err)
			}
			if applied.Hits() != 1 || cut.Hits() != 1 {
				t.Fatalf("faults fired %d (reply lost) and %d (body cut) times, want 1 each", applied.Hits(), cut.Hits())
			}
			wantRows(t, srv, "events", rowsOf(evs))
			if n := counter(q, "group_commit_loads"); n < 12 {
				t.Errorf("group_commit_loads = %d, want at least 12 (600 rows by 50)", n)
			}
			for _, tx := range srv.Txns("demo") {
				if tx.State == "VISIBLE" && !strings.HasPrefix(tx.Label, "group_commit_") {
					t.Errorf("load %s is not a group commit load (Doris names those group_commit_…)", tx.Label)
				}
			}
		})
	}
}

// Into a DUPLICATE KEY table a resend could load rows twice: refused before
// any row is sent, unless the user allows duplicates; then a lost answer
// fails the Write naming the load's rows instead of resending them.
func TestGroupCommitIntoADuplicateTableIsRefusedWithoutTheOptInAndNeverResends(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")), doristest.WithGroupCommitInterval(20*time.Millisecond))
	evs := events(20, shortName)
	_, err := runPipeline(t, func(s beam.Scope) {
		Write(s, configFor(srv, "events"), beam.CreateList(s, evs), WithDelivery(GroupCommit), WithRetry(fastRetry))
	})
	if err == nil || !strings.Contains(err.Error(), "a DUPLICATE KEY table") || !strings.Contains(err.Error(), "WithDuplicatesAllowed()") {
		t.Fatalf("Write into a DUPLICATE KEY table: err %v, want a refusal naming the table's keys and WithDuplicatesAllowed()", err)
	}
	if rows := srv.Rows("demo", "events"); len(rows) != 0 {
		t.Fatalf("the refused Write loaded %d rows", len(rows))
	}

	lost := srv.Inject(doristest.Fault{Kind: doristest.LoseReply, Endpoint: doristest.EndpointLoad, Count: 1})
	_, err = runPipeline(t, func(s beam.Scope) {
		Write(s, configFor(srv, "events"), beam.CreateList(s, evs), WithDelivery(GroupCommit), WithGroupCommitMode(GroupCommitSync),
			WithDuplicatesAllowed(), WithRetry(fastRetry))
	})
	if err == nil || !strings.Contains(err.Error(), "lost its answer, and it is not resent") || !strings.Contains(err.Error(), "20 rows") {
		t.Fatalf("a lost answer into a DUPLICATE KEY table: err %v, want a failure naming the 20 rows, not resent", err)
	}
	if lost.Hits() != 1 {
		t.Fatalf("the lost-reply fault fired %d times, want 1", lost.Hits())
	}
	if rows := srv.Rows("demo", "events"); len(rows) != 20 {
		t.Fatalf("table holds %d rows, want the 20 of the one load (applied, its answer lost, not resent)", len(rows))
	}
}

// Where the Write declares the table's key model (WithCreateTable), group
// commit into a model that keeps a resent row twice is refused at
// construction, before the pipeline runs; a UNIQUE KEY table or the opt-in
// passes. (A table not declared is checked at Setup, above: construction
// reaches no server.)
func TestGroupCommitIntoADeclaredDuplicateTableIsRefusedAtConstruction(t *testing.T) {
	srv := startServer(t)
	for _, tc := range []struct {
		name string
		opts []WriteOption
		want string // "" accepted
	}{
		{"the default model, DUPLICATE KEY", []WriteOption{WithCreateTable(TableSpec{})},
			"WithDelivery(dorisio.GroupCommit) with WithCreateTable(TableSpec{}), a DUPLICATE KEY table: group commit loads have no label, so a load whose answer is lost cannot be settled and a resend may load its rows twice; only a UNIQUE KEY table keeps one row per key. Create a UNIQUE KEY table (TableSpec{Model: dorisio.UniqueKey}), or accept duplicates with dorisio.WithDuplicatesAllowed()"},
		{"an AGGREGATE KEY table", []WriteOption{WithCreateTable(TableSpec{Model: AggregateKey, Keys: []string{"id"}})}, `WithCreateTable(TableSpec{Keys: ["id"], Model: dorisio.AggregateKey}), an AGGREGATE KEY table: group commit loads have no label`},
		{"a UNIQUE KEY table", []WriteOption{WithCreateTable(TableSpec{Model: UniqueKey})}, ""},
		{"a DUPLICATE KEY table with the opt-in", []WriteOption{WithCreateTable(TableSpec{}), WithDuplicatesAllowed()}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, scope := beam.NewPipelineWithRoot()
			_, err := newWrite(scope, configFor(srv, "events"), beam.CreateList(scope, events(2, shortName)), append(tc.opts, WithDelivery(GroupCommit)))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want it to hold %q", err, tc.want)
			}
		})
	}
}

// Rows routed to their tables (a `doris:",table"` field, Config.Table
// empty) are held to the same rule: a DUPLICATE KEY table among them is
// refused, naming it, before any of its rows are sent. Before, only
// Config.Table was checked, and routed rows went into DUPLICATE KEY tables
// without the opt-in.
func TestGroupCommitRefusesARoutedRowsDuplicateKeyTable(t *testing.T) {
	srv := startServer(t, doristest.WithTable("demo.u(id BIGINT NOT NULL, name VARCHAR(32), age BIGINT) UNIQUE KEY(id)"),
		doristest.WithTable(userDDL("d")), doristest.WithGroupCommitInterval(20*time.Millisecond))
	in := []routedUser{{"u", 1, "ann", 30}, {"d", 2, "bob", 40}, {"u", 3, "al", 50}}
	err := writeAll(t, srv, "", in, WithDelivery(GroupCommit), WithGroupCommitMode(GroupCommitSync), WithRetry(fastRetry))
	wantErr(t, err, "into table demo.d, a DUPLICATE KEY table", "WithDuplicatesAllowed()")
	if rows := srv.Rows("demo", "d"); len(rows) != 0 {
		t.Errorf("the DUPLICATE KEY table holds %d rows, want none: group commit was refused for it", len(rows))
	}

	mustWrite(t, srv, "", in, WithDelivery(GroupCommit), WithGroupCommitMode(GroupCommitSync), WithDuplicatesAllowed(), WithRetry(fastRetry))
	if u, d := len(srv.Rows("demo", "u")), len(srv.Rows("demo", "d")); d != 1 || u != 2 {
		t.Errorf("with WithDuplicatesAllowed(): tables u and d hold %d and %d rows, want 2 (a UNIQUE KEY table: keys 1 and 3) and 1", u, d)
	}
}

// A group-commit Write that fails after some of its loads are visible says
// what a re-run does with them: they carry no label of ours, so it loads
// their rows again. Before, it said "identity loads are skipped by a re-run
// ...; AtLeastOnce loads are not", neither of which names group commit.
func TestAFailedGroupCommitWriteSaysARerunLoadsItsVisibleLoadsAgain(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(uniqueEventsDDL, "events")), doristest.WithGroupCommitInterval(20*time.Millisecond))
	evs := events(100, shortName)
	evs[95].Name = strings.Repeat("x", 17) // too long for VARCHAR(16): its load fails
	_, err := runPipeline(t, func(s beam.Scope) {
		Write(s, configFor(srv, "events"), beam.CreateList(s, evs), WithDelivery(GroupCommit), WithGroupCommitMode(GroupCommitSync),
			WithMaxBatchRows(10), WithLoadsInFlight(1), WithRetry(fastRetry))
	})
	if err == nil {
		t.Fatal("a Write with a row too long for its column succeeded")
	}
	msg := err.Error()
	if !strings.Contains(msg, "are already visible (group-commit loads carry no label of this Write") || !strings.Contains(msg, "a re-run loads their rows again") {
		t.Errorf("the failure does not say what a re-run does with the visible group-commit loads:\n%s", msg)
	}
	if strings.Contains(msg, "identity loads") || strings.Contains(msg, "AtLeastOnce") {
		t.Errorf("the failure speaks of identity or AtLeastOnce loads, which a group-commit Write has none of:\n%s", msg)
	}
}
