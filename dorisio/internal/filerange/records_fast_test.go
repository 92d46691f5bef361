package filerange

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// fastCases are scanner settings, with the bytes random files of them are
// made of: scanFast must cut every file where next() alone cuts it.
var fastCases = []struct {
	name string
	sc   recordScanner
	sep  string
	eol  string
}{
	{"RFC 4180", rfc(",", "\n"), ",", "\n"},
	{"RFC 4180, tab separated", rfc("\t", "\n"), "\t", "\n"},
	{"the Doris dialect", dorisDialect(), ",", "\n"},
	{"CRLF (next() alone)", rfc(",", "\r\n"), ",", "\r\n"},
	{"a multi-byte separator and delimiter (next() alone)", rfc("||", "##"), "||", "##"},
}

// randomCSV is a file of n records: mostly well-formed quoted CSV whose
// values hold separators, line delimiters, doubled quotes and escapes, and
// some records of noise (quotes inside plain values, text after a closing
// quote, stray escapes), with empty lines, and maybe no final delimiter.
func randomCSV(r *rand.Rand, n int, sep, eol string) []byte {
	var b bytes.Buffer
	text := func() {
		for k := r.IntN(30); k > 0; k-- {
			switch r.IntN(12) {
			case 0:
				b.WriteString(sep)
			case 1:
				b.WriteString(eol)
			case 2:
				b.WriteString(`""`)
			case 3:
				b.WriteString(`\`)
			case 4:
				b.WriteString("é")
			default:
				b.WriteByte(byte('a' + r.IntN(26)))
			}
		}
	}
	for i := 0; i < n; i++ {
		if r.IntN(20) == 0 {
			b.WriteString(eol) // an empty record
			continue
		}
		for f := r.IntN(6); f >= 0; f-- {
			switch r.IntN(8) {
			case 0, 1, 2:
				b.WriteByte('"')
				text()
				b.WriteByte('"')
			case 3: // noise: quotes and escapes anywhere
				for k := r.IntN(8); k > 0; k-- {
					b.WriteString([]string{`"`, `\`, "x", sep, `\"`, `""`}[r.IntN(6)])
				}
			default:
				for k := r.IntN(20); k > 0; k-- {
					b.WriteByte(byte('0' + r.IntN(10)))
				}
			}
			if f > 0 {
				b.WriteString(sep)
			}
		}
		if i < n-1 || r.IntN(2) == 0 {
			b.WriteString(eol)
		}
	}
	return b.Bytes()
}

// wrappedCSV is a file of n records whose quoted values are mostly wrapped
// (Range.Wrapped): the shape exporters write. quoteRate of the values are
// quoted (0: long stretches of plain records, read by scanPlain); 1 in 40
// of those holds what makes it not wrapped (a separator, a delimiter, a
// doubled quote, text after it, an escape), and some records are empty.
func wrappedCSV(r *rand.Rand, n int, sep, eol string, quoteRate float64) []byte {
	var b bytes.Buffer
	word := func() {
		for k := r.IntN(12); k > 0; k-- {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
	}
	for i := 0; i < n; i++ {
		if r.IntN(40) == 0 {
			b.WriteString(eol)
			continue
		}
		for f := r.IntN(6); f >= 0; f-- {
			if r.Float64() < quoteRate {
				b.WriteByte('"')
				word()
				if r.IntN(40) == 0 {
					b.WriteString([]string{sep, eol, `""`, `\`, `\N`}[r.IntN(5)])
					word()
				}
				b.WriteByte('"')
				if r.IntN(80) == 0 {
					b.WriteString("x") // text after the closing quote
				}
			} else {
				word()
			}
			if f > 0 {
				b.WriteString(sep)
			}
		}
		if i < n-1 || r.IntN(2) == 0 {
			b.WriteString(eol)
		}
	}
	return b.Bytes()
}

// TestFastScanCutsWhereNextCuts checks scanFast against next() alone on
// random files, for many range sizes and windows: the same ranges, with
// the same record counts and marks. Ranges restart the 64-byte blocks at
// every cut, so the sizes put the blocks' edges everywhere in the records.
// Half the files are mostly wrapped values, a quarter of them with long
// stretches of plain records.
func TestFastScanCutsWhereNextCuts(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 3))
	for _, tc := range fastCases {
		t.Run(tc.name, func(t *testing.T) {
			wrapped := 0
			defer func() {
				if tc.sc.fastOK() && tc.sc.escape == tc.sc.enclose && wrapped == 0 {
					t.Errorf("no range of the wrapped files is Wrapped")
				}
			}()
			for file := 0; file < 150; file++ {
				data := randomCSV(r, 1+r.IntN(60), tc.sep, tc.eol)
				switch file % 4 {
				case 1:
					data = wrappedCSV(r, 1+r.IntN(60), tc.sep, tc.eol, 0.5)
				case 3:
					data = wrappedCSV(r, 1+r.IntN(200), tc.sep, tc.eol, 0.01)
				}
				ends := map[int64]bool{}
				for _, at := range Starts(tc.sc.syntax(), data)[1:] {
					ends[int64(at)] = true
				}
				for _, rb := range []int64{1, 2, 17, 63, 64, 65, 100, 200, 1 << 20} {
					for _, window := range []int64{64, 100, 129, 1024, readWindow} {
						want := splitAll(t, &Splitter{sc: tc.sc, rangeBytes: rb, window: window, noFast: true}, data)
						got := splitAll(t, &Splitter{sc: tc.sc, rangeBytes: rb, window: window}, data)
						if !slices.EqualFunc(got, want, func(a, b Range) bool {
							return a.Start == b.Start && a.End == b.End && a.Records == b.Records && a.Wrapped == b.Wrapped && a.Suspect == b.Suspect
						}) {
							t.Fatalf("range %d bytes, window %d: scanFast cut %v, next() alone %v\nfile %q", rb, window, got, want, data)
						}
						for _, fr := range got {
							if q := bytes.IndexByte(data[fr.Start:fr.End], tc.sc.enclose) >= 0; fr.Quoted != q {
								t.Fatalf("range %d bytes, window %d: range %v says Quoted %v\nfile %q", rb, window, fr, fr.Quoted, data)
							}
							if fr.Wrapped != wrappedRef(tc.sc, data, fr, ends) {
								t.Fatalf("range %d bytes, window %d: range %v says Wrapped %v\nfile %q", rb, window, fr, fr.Wrapped, data)
							}
							if fr.Wrapped {
								wrapped++
							}
						}
					}
				}
			}
		})
	}
}

// splitAll returns the ranges sp cuts data into.
func splitAll(t *testing.T, sp *Splitter, data []byte) []Range {
	t.Helper()
	var got []Range
	if err := sp.Split(bytes.NewReader(data), int64(len(data)), func(fr Range) error {
		got = append(got, fr)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestFastScanAtBlockEdges puts each case's telling bytes at every offset
// around the first 64-byte block's end (a record of padding before them)
// and checks the ranges against the records Doris reads.
func TestFastScanAtBlockEdges(t *testing.T) {
	cases := []struct {
		name    string
		sc      recordScanner
		records []string // after the padding record; joined, the file
	}{
		{"a closing quote, then the delimiter", rfc(",", "\n"), []string{"1,\"a\nb\"\n", "2,c\n"}},
		{"a doubled quote", rfc(",", "\n"), []string{"1,\"a\"\"\n\"\"b\"\n", "2,c\n"}},
		{"an opening quote after a separator", rfc(",", "\n"), []string{"1,\"\n\",\"\n\"\n", "2\n"}},
		{"a quote at a record start", rfc(",", "\n"), []string{"\"x\ny\"\n", "\"\"\n"}},
		{"a quote inside a plain value", rfc(",", "\n"), []string{"1,a\"b\n", "2,\"c\nd\"\n"}},
		{"text after a closing quote", rfc(",", "\n"), []string{"1,\"a\"b\"c\n", "2,\"d\ne\"\n"}},
		{"an escaped quote in the Doris dialect", dorisDialect(), []string{"1,\"a\\\"\nb\"\n", "2,\"c\\\\\"\n", "3\n"}},
		{"empty records", rfc(",", "\n"), []string{"\n", "\n", "1,\"\n\"\n", "\n"}},
		{"CRLF", rfc(",", "\r\n"), []string{"1,\"a\r\nb\"\r\n", "2,c\r\n"}},
		{"a multi-byte delimiter", rfc("||", "##"), []string{"1||\"a##\"##", "2||b##"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for pad := 50; pad <= 140; pad++ {
				first := "0" + strings.Repeat("x", pad-1-len(tc.sc.delim)) + string(tc.sc.delim)
				records := append([]string{first}, tc.records...)
				data := []byte(strings.Join(records, ""))
				ends := map[int64]bool{}
				var off, want int64
				for _, rec := range records {
					off += int64(len(rec))
					ends[off] = true
					if !isEmptyRecord(rec, tc.sc.delim) {
						want++
					}
				}
				for rb := int64(1); rb <= int64(len(data))+1; rb++ {
					for _, window := range []int64{64, 128, readWindow} {
						got := splitAll(t, &Splitter{sc: tc.sc, rangeBytes: rb, keep: true, window: window}, data)
						if msg := checkRanges(data, tc.sc, got, ends, 0, want, rb); msg != "" {
							t.Fatalf("padding %d, window %d, range %d bytes: %s\nranges %v", pad, window, rb, msg, got)
						}
					}
				}
			}
		})
	}
}

// TestHasEmptyFindsEveryDoubledDelimiter puts a doubled delimiter at every
// offset around the 8-byte words hasEmpty reads, and a delimiter at the
// start.
func TestHasEmptyFindsEveryDoubledDelimiter(t *testing.T) {
	for n := 1; n < 600; n += 1 + n/40 {
		for at := 0; at+1 < n; at++ {
			b := bytes.Repeat([]byte("a"), n)
			b[n-1] = '\n'
			if emptyIn(t, b, '\n') {
				t.Fatalf("%q: an empty record found", b)
			}
			b[at], b[at+1] = '\n', '\n'
			if !emptyIn(t, b, '\n') {
				t.Fatalf("%q: the empty record not found", b)
			}
		}
	}
	if !emptyIn(t, []byte("\nabc\n"), '\n') {
		t.Error("a delimiter at the start is an empty record")
	}
}

// hasEmpty finds a doubled delimiter wherever it is (each byte of a
// 64-byte block, across two blocks, in the tail after the last block) and
// the leading one, and nothing in records without one.
func TestHasEmptyFindsEveryEmptyRecord(t *testing.T) {
	plain := bytes.ReplaceAll(benchEvents(2000), []byte(`"`), nil)
	for _, d := range []byte{'\n', ';'} {
		recs := bytes.ReplaceAll(plain, []byte("\n"), []byte{d})
		if emptyIn(t, recs, d) {
			t.Fatalf("delimiter %q: records without an empty one have one", d)
		}
		for n := 1; n <= 200; n++ {
			for at := 0; at+1 < n; at++ {
				b := slices.Clone(recs[:n])
				b[at], b[at+1] = d, d
				if !emptyIn(t, b, d) {
					t.Fatalf("delimiter %q: %d bytes with a doubled one at %d: not found", d, n, at)
				}
			}
			b := slices.Clone(recs[:n])
			b[0] = d
			if !emptyIn(t, b, d) {
				t.Fatalf("delimiter %q: %d bytes starting with it: not found", d, n)
			}
		}
	}
}

// emptyIn is hasEmpty's answer for b, checked against delimCount's (the
// one-pass count the split uses: AVX2 where the CPU has it), whose count
// must be bytes.Count's.
func emptyIn(t *testing.T, b []byte, d byte) bool {
	t.Helper()
	want := hasEmpty(b, d)
	n, empty := delimCount(b, d)
	if empty != want || n != int64(bytes.Count(b, []byte{d})) {
		t.Fatalf("%q: delimCount says %d delimiters, empty %v; bytes.Count %d, hasEmpty %v", b, n, empty, bytes.Count(b, []byte{d}), want)
	}
	return want
}

// BenchmarkHasEmpty measures the search for an empty record over a read
// window of the benchmark's rows without quotes (it finds none).
func BenchmarkHasEmpty(b *testing.B) {
	recs := bytes.ReplaceAll(benchEvents(readWindow), []byte(`"`), nil)
	b.SetBytes(int64(len(recs)))
	for b.Loop() {
		if hasEmpty(recs, '\n') {
			b.Fatal("found an empty record")
		}
	}
}
