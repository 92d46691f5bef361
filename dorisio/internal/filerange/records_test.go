package filerange

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/cespare/xxhash/v2"
)

// splitCase is a file and the records Doris reads in it, each with its
// delimiter: the records joined are the file.
type splitCase struct {
	name    string
	scanner recordScanner
	header  int      // header records (Files.HeaderLines)
	records []string // in order; "" never (an empty record is just its delimiter)
}

func rfc(sep, delim string) recordScanner {
	return recordScanner{sep: []byte(sep), delim: []byte(delim), enclose: '"', escape: '"'}
}

func dorisDialect() recordScanner {
	return recordScanner{sep: []byte(","), delim: []byte("\n"), enclose: '"', escape: '\\'}
}

var splitCases = []splitCase{
	{"RFC 4180 with values Doris would change", rfc(",", "\n"), 0, []string{"1,\"\"\"x\"\"\"\n", "2,a\n", "3,\"\\N\"\n", "4,\"b\"\n", "5,\"\"\"\"\n"}},
	{"quoted values hold newlines, commas and doubled quotes", rfc(",", "\n"), 0, []string{
		"1,\"first line\nsecond line, with comma\nthird\"\n", "2,\"a \"\"quoted\"\" word\"\n", "3,plain\n", "4,\"\"\n"}},
	{"CRLF records with a quoted CRLF", rfc(",", "\r\n"), 0, []string{
		"1,\"a\r\nb\"\r\n", "2,c\r\n", "3,\"\r\n\"\r\n"}},
	{"a missing final newline", rfc(",", "\n"), 0, []string{"1,a\n", "2,\"b\nc\""}},
	{"a header line, quoted across lines itself", rfc(",", "\n"), 1, []string{
		"\"id\",\"name\nof it\"\n", "1,a\n", "2,\"b\"\n"}},
	{"an empty file", rfc(",", "\n"), 0, nil},
	{"a file of only a header", rfc(",", "\n"), 1, []string{"id,name\n"}},
	{"multi-byte UTF-8 everywhere", rfc(",", "\n"), 0, []string{
		"1,\"héllo\nwörld\"\n", "2,日本語\n", "3,\"ü,ß\n€\"\n", "4,😀\n"}},
	{"empty lines are records Doris skips", rfc(",", "\n"), 0, []string{"1,a\n", "\n", "\n", "2,b\n"}},
	{"a quote inside a plain value is a character", rfc(",", "\n"), 0, []string{"1,a\"b\n", "2,c\n", "3,\"d\"\n"}},
	{"a backslash before a closing quote is a character in RFC 4180", rfc(",", "\n"), 0, []string{"4,\"x\\\"\n", "5,y\n"}},
	{"text after a closing quote runs on to the separator", rfc(",", "\n"), 0, []string{"1,\"a\"b,\"c\nd\"\n", "2,e\n"}},
	{"an unterminated quoted value runs to the end of the file", rfc(",", "\n"), 0, []string{"1,a\n", "2,\"b\n3,c\n"}},
	{"a multi-byte separator and delimiter", rfc("||", "##"), 0, []string{"1||\"a##b||c\"##", "2||d##", "3||\"\"\"##\"##"}},
	{"a multi-byte separator is matched from the field's start, as Doris matches it", rfc("||", "\n"), 0, []string{
		"1||a|||\"x\n", "y\"||z\n", "2|||||\"p\n", "q\"\n", "3||||\"r\ns\"\n"}},
	{"the Doris dialect: backslash escapes inside quotes", dorisDialect(), 0, []string{
		"1,\"x\\\"y\nz\"\n", "2,\"C:\\\\temp\\\\\"\n", "3,\"a\"\"b\n\"\n", "4,b\\\n"}},
	{"JSON lines", recordScanner{delim: []byte("\n")}, 0, []string{"{\"a\":1}\n", "{\"a\":\"b,\\\"c\"}\n", "\n", "{\"a\":\"é\"}"}},
	{"CSV without quoting (a quote is text)", recordScanner{sep: []byte("\t"), delim: []byte("\n")}, 0, []string{"1\t\"a\n", "2\tb\"\n"}},
}

// TestRangesAreWholeRecordsForEveryRangeSize cuts each file with every range
// size from 1 byte to past its end, through windows of many sizes (every
// record split across reads somewhere), and checks that the ranges cover
// the records after the header exactly, each ending where a record ends,
// with the right record counts and, when kept, bytes.
func TestRangesAreWholeRecordsForEveryRangeSize(t *testing.T) {
	for _, tc := range splitCases {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(strings.Join(tc.records, ""))
			ends := map[int64]bool{}
			var off, bodyStart, want int64
			for i, r := range tc.records {
				off += int64(len(r))
				if i < tc.header {
					bodyStart = off
					continue
				}
				ends[off] = true
				if !isEmptyRecord(r, tc.scanner.delim) {
					want++
				}
			}
			for _, window := range []int64{1, 2, 3, 5, 8, 13, 64, readWindow} {
				for rb := int64(1); rb <= int64(len(data))+1; rb++ {
					sp := &Splitter{sc: tc.scanner, rangeBytes: rb, headerLines: tc.header, keep: true, window: window}
					var got []Range
					err := sp.Split(iotest.HalfReader(bytes.NewReader(data)), int64(len(data)), func(fr Range) error {
						got = append(got, fr)
						return nil
					})
					if err != nil {
						t.Fatalf("window %d, range %d: %v", window, rb, err)
					}
					if msg := checkRanges(data, tc.scanner, got, ends, bodyStart, want, rb); msg != "" {
						t.Fatalf("window %d, range %d bytes: %s\nranges %v", window, rb, msg, got)
					}
				}
			}
		})
	}
}

func isEmptyRecord(r string, delim []byte) bool { return r == string(delim) }

func checkRanges(data []byte, sc recordScanner, got []Range, ends map[int64]bool, bodyStart, want, rb int64) string {
	enclose := sc.enclose
	_, _, bare := refEnds(sc, data)
	var records int64
	next := bodyStart
	for i, fr := range got {
		if fr.Start < next {
			return fmt.Sprintf("range %d starts at %d, inside the previous one (ends %d)", i, fr.Start, next)
		}
		if fr.Start > next && !allEmpty(data[next:fr.Start]) {
			return fmt.Sprintf("bytes [%d, %d) of records belong to no range", next, fr.Start)
		}
		if !ends[fr.End] {
			return fmt.Sprintf("range %d ends at %d, not at the end of a record", i, fr.End)
		}
		if i < len(got)-1 && fr.End-fr.Start < rb {
			return fmt.Sprintf("range %d is %d bytes, under the range size", i, fr.End-fr.Start)
		}
		if !bytes.Equal(fr.Data, data[fr.Start:fr.End]) {
			return fmt.Sprintf("range %d keeps %q, not its bytes %q", i, fr.Data, data[fr.Start:fr.End])
		}
		// Quoted decides whether the range is sent with the enclose headers.
		if q := enclose != 0 && bytes.IndexByte(data[fr.Start:fr.End], enclose) >= 0; fr.Quoted != q {
			return fmt.Sprintf("range %d says Quoted %v of %q", i, fr.Quoted, data[fr.Start:fr.End])
		}
		if d := xxhash.Sum64(data[fr.Start:fr.End]); fr.Digest != d {
			return fmt.Sprintf("range %d says digest %016x of bytes whose xxhash64 is %016x", i, fr.Digest, d)
		}
		s := bytes.Contains(data[fr.Start:fr.End], []byte(`"""`)) || bytes.Contains(data[fr.Start:fr.End], []byte(`"\N"`))
		for at := range bare {
			s = s || at >= fr.Start && at < fr.End
		}
		if fr.Suspect != (s && fr.Quoted) {
			return fmt.Sprintf("range %d says Suspect %v of %q", i, fr.Suspect, data[fr.Start:fr.End])
		}
		if w := wrappedRef(sc, data, fr, ends); fr.Wrapped != w {
			return fmt.Sprintf("range %d says Wrapped %v of %q", i, fr.Wrapped, data[fr.Start:fr.End])
		}
		records += fr.Records
		next = fr.End
	}
	if next < int64(len(data)) && !allEmpty(data[next:]) {
		return fmt.Sprintf("the end of the file [%d, %d) is in no range", next, len(data))
	}
	if records != want {
		return fmt.Sprintf("%d records in the ranges, want %d", records, want)
	}
	return ""
}

// wrappedRef is Range.Wrapped by another road: the range holds a '"', and
// each of its records (ends are the records' ends) matches a regular
// expression of fields that are bare without any '"' or wrapped in '"'
// without a separator, delimiter or '"' inside; no escape byte anywhere
// where it differs from the enclose. Only one-byte separators and line
// delimiters (fastOK's) are read so.
func wrappedRef(sc recordScanner, data []byte, fr Range, ends map[int64]bool) bool {
	b := data[fr.Start:fr.End]
	if !sc.fastOK() || bytes.IndexByte(b, sc.enclose) < 0 {
		return false
	}
	if sc.escape != sc.enclose && bytes.IndexByte(b, sc.escape) >= 0 {
		return false
	}
	sep, q, d := regexp.QuoteMeta(string(sc.sep)), regexp.QuoteMeta(string(sc.enclose)), regexp.QuoteMeta(string(sc.delim))
	field := fmt.Sprintf(`([^%[1]s%[2]s%[3]s]*|%[2]s[^%[1]s%[2]s%[3]s]*%[2]s)`, sep, q, d)
	re := regexp.MustCompile(fmt.Sprintf(`^%[1]s(%[2]s%[1]s)*$`, field, sep))
	start := fr.Start
	for off := fr.Start + 1; off <= fr.End; off++ {
		if !ends[off] && off != fr.End {
			continue
		}
		rec := bytes.TrimSuffix(data[start:off], sc.delim)
		if len(rec) > 0 && !re.Match(rec) {
			return false
		}
		start = off
	}
	return true
}

// allEmpty reports whether b holds only empty records (delimiters): what
// the Splitter may leave out of every range.
func allEmpty(b []byte) bool { return len(bytes.Trim(b, "\r\n#|;")) == 0 }

func TestAFileThatIsNotTheListedSizeIsRefused(t *testing.T) {
	sp := &Splitter{sc: rfc(",", "\n"), rangeBytes: 4}
	emit := func(Range) error { return nil }
	if err := sp.Split(strings.NewReader("1,a\n2,b\n"), 6, emit); err == nil || !strings.Contains(err.Error(), "more than the 6 bytes") {
		t.Errorf("a longer file: %v", err)
	}
	if err := sp.Split(strings.NewReader("1,a\n"), 8, emit); err == nil || !strings.Contains(err.Error(), "ended after 4 of the 8 bytes") {
		t.Errorf("a shorter file: %v", err)
	}
}

// BenchmarkSplitQuotedCSV measures the Splitter on rows shaped like the
// benchmark's events (two quoted fields each): go test -bench Split.
func BenchmarkSplitQuotedCSV(b *testing.B) {
	data := benchEvents(64 << 20)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		sp := &Splitter{sc: rfc(",", "\n"), rangeBytes: 64 << 20}
		if err := sp.Split(bytes.NewReader(data), int64(len(data)), func(Range) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanFast measures scanFast alone over rows shaped like the
// benchmark's events, without the reading: go test -bench ScanFast.
func BenchmarkScanFast(b *testing.B) {
	data := benchEvents(4 << 20)
	sc := rfc(",", "\n")
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		sc.reset(data, true)
		if end, _, _, _ := sc.scanFast(0, len(data)+1); end < len(data)-64 {
			b.Fatalf("stopped at %d of %d", end, len(data))
		}
	}
}

// benchEvents is n bytes or so of rows shaped like the benchmark's events
// (two quoted fields each).
func benchEvents(n int) []byte {
	var buf bytes.Buffer
	for i := 0; buf.Len() < n; i++ {
		fmt.Fprintf(&buf, "%d,2026-08-20 22:13:20,%d,\"click\",%d.00,\"note %d\"\n", i, i%100003, i%10000, i%997)
	}
	return buf.Bytes()
}

// BenchmarkSplitUnquotedCSV is BenchmarkSplitQuotedCSV on the same rows
// without their quotes: the file a like-for-like comparison with curl
// loads.
func BenchmarkSplitUnquotedCSV(b *testing.B) {
	benchSplitAsWriteFiles(b, bytes.ReplaceAll(benchEvents(64<<20), []byte(`"`), nil))
}

// A value whose enclose never closes runs to the end of the file, as
// Doris reads it, and its range says where the enclose is, for every range
// and window size; a quote that is text, or one closed at the file's last
// byte, marks nothing.
func TestAnUnclosedQuoteMarksItsRange(t *testing.T) {
	for _, tc := range []struct {
		sc   recordScanner
		data string
		at   int64 // -1: none
	}{
		{rfc(",", "\n"), "1,a\n2,\"b\n3,c\n", 6},
		{rfc(",", "\n"), "1,\"a\"\n2,b\"\n3,\"c\"", -1},
		{dorisDialect(), "1,a\n2,\"b\\\"\n3,c\\", 6},
		{rfc("||", "\n"), "1||a\n2||\"b||c\n", 8},
	} {
		data := []byte(tc.data)
		for _, window := range []int64{1, 3, 8, readWindow} {
			for rb := int64(1); rb <= int64(len(data)); rb++ {
				got := splitAll(t, &Splitter{sc: tc.sc, rangeBytes: rb, window: window}, data)
				for i, fr := range got {
					last := i == len(got)-1
					if want := last && tc.at >= 0; fr.Unclosed != want || want && fr.UnclosedAt != tc.at {
						t.Fatalf("%q, window %d, range size %d: range %d [%d, %d) says Unclosed %v at %d; want %v at %d",
							tc.data, window, rb, i, fr.Start, fr.End, fr.Unclosed, fr.UnclosedAt, want, tc.at)
					}
				}
			}
		}
	}
}
