package filerange

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"testing/iotest"
)

// TestCountIsTheRecordsDorisCountsPastTheHeader counts every split case as
// a compressed file is counted (size unknown, read in pieces): the
// non-empty records past its header lines, as Doris counts a load.
func TestCountIsTheRecordsDorisCountsPastTheHeader(t *testing.T) {
	for _, tc := range splitCases {
		t.Run(tc.name, func(t *testing.T) {
			var want int64
			for i, r := range tc.records {
				if i >= tc.header && !isEmptyRecord(r, tc.scanner.delim) {
					want++
				}
			}
			sc := tc.scanner
			syn := Syntax{Delim: sc.delim, Sep: sc.sep, Enclose: sc.enclose, Escape: sc.escape}
			data := strings.Join(tc.records, "")
			got, err := Count(iotest.HalfReader(strings.NewReader(data)), syn, tc.header)
			if err != nil || got != want {
				t.Errorf("Count = %d, %v; want %d records", got, err, want)
			}
		})
	}
}

// An empty line among the header lines is one of them, as Doris'
// skip_lines counts lines: Count subtracted the header from the non-empty
// records, and so counted one record too few (a re-run then reported a
// .gz file an earlier run loaded one record short).
func TestCountSkipsEmptyHeaderLinesAsLines(t *testing.T) {
	syn := Syntax{Delim: []byte("\n"), Sep: []byte(","), Enclose: '"'}
	for _, tc := range []struct {
		data   string
		header int
		want   int64
	}{
		{"\nid,name\n1,a\n2,b\n", 2, 2},
		{"\n\n1,a\n2,b\n", 2, 2},
		{"id,name\n\n1,a\n\n2,b\n", 2, 2},
		{"\n", 3, 0},
	} {
		got, err := Count(strings.NewReader(tc.data), syn, tc.header)
		if err != nil || got != tc.want {
			t.Errorf("Count(%q, %d header lines) = %d, %v; want %d", tc.data, tc.header, got, err, tc.want)
		}
	}
}

// TestCountReadsPastManyWindows counts a file of many windows whose quoted
// values hold line delimiters, one of them longer than a window.
func TestCountReadsPastManyWindows(t *testing.T) {
	var buf bytes.Buffer
	buf.WriteString("id,note\n")
	var want int64
	for i := 0; buf.Len() < 3*readWindow; i++ {
		fmt.Fprintf(&buf, "%d,\"line one\nline \"\"two\"\", %d\"\n", i, i)
		want++
		if i == 1000 {
			fmt.Fprintf(&buf, "%d,\"%s\"\n", i, strings.Repeat("x\n", readWindow))
			want++
		}
	}
	syn := Syntax{Delim: []byte("\n"), Sep: []byte(","), Enclose: '"', Escape: '"'}
	got, err := Count(&buf, syn, 1)
	if err != nil || got != want {
		t.Errorf("Count = %d, %v; want %d records", got, err, want)
	}
}
