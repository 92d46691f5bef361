package doristest

import (
	"strings"
	"testing"
	"time"
)

// Doris refuses a label with group commit, in its own words; without one
// the load is grouped under a generated group_commit_ label, answered with
// "GroupCommit": true, and visible once its group commits (sync_mode: when
// it answers; async_mode: after the group's interval).
func TestGroupCommitRefusesALabelAndGroupsLoadsUntilTheirCommit(t *testing.T) {
	s := newServer(t, WithTable("demo.t(id INT, v VARCHAR(8))"), WithGroupCommitInterval(time.Hour))
	got := streamLoad(t, s, "demo", "t", hdr{"label": "mine", "group_commit": "async_mode", "column_separator": ","}, "1,a\n")
	if !strings.Contains(got, `"Message": "[INVALID_ARGUMENT]label and group_commit can't be set at the same time"`) {
		t.Fatalf("a labelled group commit load answered %s", got)
	}
	got = streamLoad(t, s, "demo", "t", hdr{"group_commit": "async_mode", "column_separator": ","}, "1,a\n2,b\n")
	for _, want := range []string{`"GroupCommit": true`, `"Label": "group_commit_`, `"Status": "Success"`, `"NumberLoadedRows": 2`} {
		if !strings.Contains(got, want) {
			t.Fatalf("an async group commit load answered %s, want %s in it", got, want)
		}
	}
	if strings.Contains(got, "TwoPhaseCommit") || strings.Contains(got, "BeginTxnTimeMs") {
		t.Fatalf("a group commit answer has fields Doris leaves out: %s", got)
	}
	if rows := s.Rows("demo", "t"); len(rows) != 0 {
		t.Fatalf("async rows visible before their group committed: %v", rows)
	}
	s.Close() // commits the open group, as Doris replays its WAL
	if rows := s.Rows("demo", "t"); len(rows) != 2 {
		t.Fatalf("after the group's commit the table holds %v, want 2 rows", rows)
	}

	s = newServer(t, WithTable("demo.t(id INT, v VARCHAR(8))"), WithGroupCommitInterval(10*time.Millisecond))
	got = streamLoad(t, s, "demo", "t", hdr{"group_commit": "sync_mode", "column_separator": ","}, "1,a\n")
	if !strings.Contains(got, `"Status": "Success"`) || len(s.Rows("demo", "t")) != 1 {
		t.Fatalf("a sync group commit load answered %s with the table holding %v: want its row visible when it answers", got, s.Rows("demo", "t"))
	}
}
