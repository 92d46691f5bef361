package filerange

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// splitEvery cuts data with every range size and window size up to its
// length (every record end at a window edge somewhere) and returns the
// ranges of the first cut, checking that every cut gives the same error.
func splitEvery(t *testing.T, data string, header int, strip bool) ([]Range, error) {
	t.Helper()
	var first []Range
	var firstErr error
	for _, window := range []int64{1, 2, 3, 5, 7, 16, int64(len(data)) + 1} {
		for rangeBytes := int64(1); rangeBytes <= int64(len(data))+1; rangeBytes++ {
			sp := &Splitter{sc: rfc(",", "\n"), rangeBytes: rangeBytes, headerLines: header, window: window, SkipBOM: true}
			sp.CheckLineEnds(strip)
			var got []Range
			err := sp.Split(strings.NewReader(data), int64(len(data)), func(fr Range) error {
				got = append(got, fr)
				return nil
			})
			if first == nil && firstErr == nil {
				first, firstErr = got, err
				if first == nil {
					first = []Range{}
				}
				continue
			}
			if (err == nil) != (firstErr == nil) || err != nil && err.Error() != firstErr.Error() {
				t.Fatalf("window %d, ranges of %d bytes: %v; the first cut: %v", window, rangeBytes, err, firstErr)
			}
		}
	}
	return first, firstErr
}

// Every record's line ending is checked, whatever the window and the
// ranges: a file whose records end both "\n" and "\r\n" fails naming its
// first line of the other kind; a line break inside a quoted value is data,
// of either kind (a spreadsheet's multi-line cell); header lines are not
// checked.
func TestARecordThatEndsTheOtherWayIsNamedByItsLine(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		header     int
		line       int64 // 0: no error
		offset     int64
	}{
		{"all \\n", "1,a\n2,b\n3,c", 0, 0, 0},
		{"all \\r\\n", "1,a\r\n2,b\r\n", 0, 0, 0},
		{"\\n, then \\r\\n on line 3", "1,a\n2,b\n3,c\r\n4,d\n", 0, 3, 12},
		{"\\r\\n, then \\n on line 2", "1,a\r\n2,b\n3,c\r\n", 0, 2, 8},
		{"a quoted \\r\\n in a \\n file is data", "1,\"a\r\nb\"\n2,c\n", 0, 0, 0},
		{"a quoted \\n in a \\r\\n file is data", "1,\"a\nb\"\r\n2,c\r\n", 0, 0, 0},
		{"a quoted value before the mix is counted in lines", "1,\"a\nb\"\n2,c\r\n", 0, 3, 12},
		{"the header's ending is not checked", "id,name\r\n1,a\n2,b\n", 1, 0, 0},
		{"the first data line decides", "id,name\n1,a\r\n2,b\n", 1, 3, 16},
		{"an empty line is a \\n ending", "1,a\r\n\n2,b\r\n", 0, 2, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := splitEvery(t, tc.data, tc.header, false)
			var m *MixedLineEnds
			switch {
			case tc.line == 0 && err != nil:
				t.Fatalf("error %v, want none", err)
			case tc.line != 0 && !errors.As(err, &m):
				t.Fatalf("error %v, want MixedLineEnds", err)
			case tc.line != 0:
				if err := m.LinesOf(strings.NewReader(tc.data)); err != nil || m.Line != tc.line || m.Offset != tc.offset {
					t.Errorf("line %d at byte %d (%v, %v), want line %d at byte %d", m.Line, m.Offset, m, err, tc.line, tc.offset)
				}
			}
		})
	}
}

// With strip the mix is read: the ranges that hold a "\r\n" record end are
// marked, and StripCR drops the "\r" of record ends only.
func TestStripCRDropsTheCROfRecordEndsOnly(t *testing.T) {
	data := "1,a\n2,\"x\r\ny\"\r\n3,c\n"
	ranges, err := splitEvery(t, data, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, fr := range ranges {
		b := []byte(data[fr.Start:fr.End])
		if fr.CRLF != strings.Contains(string(b), "\"\r\n") {
			t.Errorf("range %q: CRLF %v", b, fr.CRLF)
		}
		if fr.CRLF {
			stripped, at := StripCR(rfc(",", "\n").syntax(), b)
			for i := range stripped { // each byte maps to the same byte of the range
				if o := at(int64(i)); b[o] != stripped[i] {
					t.Errorf("byte %d of %q maps to %d of %q", i, stripped, o, b)
				}
			}
			b = stripped
		}
		out = append(out, b...)
	}
	if want := "1,a\n2,\"x\r\ny\"\n3,c\n"; string(out) != want {
		t.Errorf("stripped: %q, want %q", out, want)
	}
}

// A UTF-8 byte-order mark at the file's start belongs to no range: the
// first record starts after it (before the header line, if any).
func TestAByteOrderMarkBelongsToNoRange(t *testing.T) {
	for _, tc := range []struct {
		data   string
		header int
		first  string
	}{
		{"\xef\xbb\xbf1,a\n2,b\n", 0, "1,a\n"},
		{"\xef\xbb\xbfid,name\n1,a\n", 1, "1,a\n"},
		{"\xef\xbb\xbf", 0, ""},
		{"1,\xef\xbb\xbf\n", 0, "1,\xef\xbb\xbf\n"}, // not at the start: data
	} {
		ranges, err := splitEvery(t, tc.data, tc.header, false)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if len(ranges) > 0 {
			got = tc.data[ranges[0].Start:ranges[len(ranges)-1].End]
			got = got[:strings.IndexByte(got, '\n')+1]
		}
		if got != tc.first {
			t.Errorf("%q: first record %q, want %q", tc.data, got, tc.first)
		}
	}
	sp := NewSplitter(rfc(",", "\n").syntax(), 1<<20, 0, true)
	sp.SkipBOM = true
	var data []byte
	if err := sp.Split(bytes.NewReader([]byte("\xef\xbb\xbf1,a\n")), 7, func(fr Range) error { data = fr.Data; return nil }); err != nil || !sp.BOM || string(data) != "1,a\n" {
		t.Errorf("Split: %v, BOM %v, data %q", err, sp.BOM, data)
	}
}

func (s recordScanner) syntax() Syntax {
	return Syntax{Delim: s.delim, Sep: s.sep, Enclose: s.enclose, Escape: s.escape}
}

// BenchmarkSplitQuotedCSVCheckingLineEnds is BenchmarkSplitQuotedCSV as
// WriteFiles splits: every record's line ending checked, a byte-order mark
// skipped.
func BenchmarkSplitQuotedCSVCheckingLineEnds(b *testing.B) {
	benchSplitAsWriteFiles(b, benchEvents(64<<20))
}

// benchSplitAsWriteFiles measures the Splitter on data as WriteFiles
// splits a local RFC 4180 file.
func benchSplitAsWriteFiles(b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		sp := &Splitter{sc: rfc(",", "\n"), rangeBytes: 64 << 20, SkipBOM: true}
		sp.CheckLineEnds(false)
		if err := sp.Split(bytes.NewReader(data), int64(len(data)), func(Range) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLineEnds measures the check alone, over the same rows in the
// Splitter's read windows: its cost on top of the split.
func BenchmarkLineEnds(b *testing.B) {
	data := benchEvents(64 << 20)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		le := &lineEnds{syn: rfc(",", "\n").syntax()}
		for off := 0; off < len(data); {
			end := min(off+readWindow, len(data))
			if end < len(data) {
				end = off + bytes.LastIndexByte(data[off:end], '\n') + 1
			}
			if err := le.add(data[off:end], int64(off), 0); err != nil {
				b.Fatal(err)
			}
			off = end
		}
	}
}
