package streamload

import (
	"reflect"
	"testing"
)

// The rows of an error log are read whole: a row shown as read may hold
// line delimiters, a row or a reason may hold the log's own markup, the
// sink's rows show nothing, and a log cut short drops its last entry.
func TestErrorLogEntriesAreReadWhole(t *testing.T) {
	c := &Client{secrets: newRedactor(testUser, testPassword)}
	log := "Reason: column(a) value is incorrect while strict mode is true, src value is x. src line [x 7]; \n" +
		"Reason: actual column number in csv file is  less than  schema column number. src line [\"a\nb\"]; \n" +
		"Reason: column_name[b], the length of input is too long than schema. first 32 bytes of input str: [longer] schema length: 2; actual length: 6; . src line []; \n" +
		"Summary: not a row\n" +
		"Reason: column(a) value is incorrect, src value is y. src line [z. src line [w]; \n" +
		"Reason: password " + testPassword + ". src line [q]; \n"
	got := c.logEntries(log, false)
	want := []LogEntry{
		{Reason: "column(a) value is incorrect while strict mode is true, src value is x", Src: "x 7"},
		{Reason: "actual column number in csv file is  less than  schema column number", Src: "\"a\nb\""},
		{Reason: "column_name[b], the length of input is too long than schema. first 32 bytes of input str: [longer] schema length: 2; actual length: 6; ", Src: ""},
		{Reason: "column(a) value is incorrect, src value is y", Src: "z. src line [w", Alt: []string{"w"}},
		{Reason: "password ***", Src: "q"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d: %q", len(got), len(want), got)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("entry %d:\n got %q\nwant %q", i, got[i], want[i])
		}
	}
	if got := c.logEntries(log[:len(log)-3], true); len(got) != 4 {
		t.Errorf("a log cut short: %d entries, want 4 (the last one dropped)", len(got))
	}
	if got := c.firstErrorEntry("column(a) values is null while columns is not nullable. Src line: NULL 7"); len(got) != 1 || got[0].Src != "NULL 7" {
		t.Errorf("FirstErrorMsg: %q", got)
	}
}
