package filerange

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// refEnds reads data byte by byte as Doris' CSV reader does (recordScanner's
// doc): a field that starts with the enclose byte runs to the enclose that
// closes it (a doubled one, or one after the escape byte where it differs
// from the enclose, is literal); text after a closing enclose runs on to
// the next separator or delimiter; an unterminated value runs to the end.
// It returns each record's end (after its delimiter, or the file's end),
// the number of records that are not empty, and, where the escape is the
// enclose (RFC 4180), where an enclose is inside a bare value or text
// follows a closing one (Doris' unescaping changes it). It shares no code with the scanner: no
// IndexByte, no masks, no windows.
func refEnds(sc recordScanner, data []byte) (ends map[int64]bool, nonEmpty int64, bare map[int64]bool) {
	ends, bare = map[int64]bool{}, map[int64]bool{}
	n := len(data)
	at := func(p int, s []byte) bool { return p+len(s) <= n && bytes.Equal(data[p:p+len(s)], s) }
	useEsc := sc.escape != 0 && sc.escape != sc.enclose
	for pos := 0; pos < n; {
		start := pos
	fields:
		for {
			enclosed := sc.enclose != 0 && pos < n && data[pos] == sc.enclose
			if enclosed {
				j, closed := pos+1, false
				for j < n {
					c := data[j]
					if useEsc && c == sc.escape {
						if j+1 >= n {
							j = n
							break
						}
						j += 2
						continue
					}
					if c == sc.enclose {
						if j+1 < n && data[j+1] == sc.enclose {
							j += 2
							continue
						}
						closed = true
						j++
						break
					}
					j++
				}
				if !closed {
					pos = n
					break fields
				}
				pos = j
			}
			if enclosed && sc.escape == sc.enclose && pos < n && !at(pos, sc.sep) && !at(pos, sc.delim) {
				bare[int64(pos)] = true // text after a closing enclose ("a"b), which Doris' unescaping changes
			}
			for pos < n && !(sc.enclose != 0 && at(pos, sc.sep)) && !at(pos, sc.delim) {
				if !enclosed && sc.enclose != 0 && sc.escape == sc.enclose && data[pos] == sc.enclose {
					bare[int64(pos)] = true
				}
				pos++
			}
			switch {
			case pos >= n:
				break fields
			case sc.enclose != 0 && at(pos, sc.sep):
				pos += len(sc.sep)
				if pos >= n {
					break fields
				}
			default:
				if pos == start {
					nonEmpty--
				}
				pos += len(sc.delim)
				break fields
			}
		}
		ends[int64(pos)] = true
		nonEmpty++
	}
	return ends, nonEmpty, bare
}

// fuzzSettings are the scanner settings the fuzz test reads its files with:
// every one scanFast reads (one-byte separator and delimiter), and some
// that next() reads alone.
var fuzzSettings = []recordScanner{
	rfc(",", "\n"),
	rfc("\t", "\n"),
	dorisDialect(),
	rfc(";", "|"), // a delimiter other than "\n"
	{sep: []byte("\t"), delim: []byte(";"), enclose: '"', escape: '\\'},
	{sep: []byte(","), delim: []byte("\r"), enclose: '"', escape: '"'}, // lone CR records
	rfc(",", "\r\n"),
	{sep: []byte(","), delim: []byte("\n")}, // never quoted
}

// splitEveryWay splits data through the AVX2 masks (where the CPU has
// them), the portable masks, and next() alone, and checks the three agree
// range for range, and that the ranges are whole records by refEnds.
func splitEveryWay(t *testing.T, sc recordScanner, data []byte, rb, window int64) {
	t.Helper()
	ends, want, _ := refEnds(sc, data)
	split := func(avx2, noFast bool) []Range {
		defer func(was bool) { setAVX2(was) }(setAVX2(avx2))
		var got []Range
		sp := &Splitter{sc: sc, rangeBytes: rb, window: window, keep: true, noFast: noFast}
		if err := sp.Split(bytes.NewReader(data), int64(len(data)), func(fr Range) error {
			got = append(got, fr)
			return nil
		}); err != nil {
			t.Fatalf("settings %+v, range %d, window %d: %v\nfile %q", sc, rb, window, err, data)
		}
		return got
	}
	same := func(a, b Range) bool {
		return a.Start == b.Start && a.End == b.End && a.Records == b.Records && a.Quoted == b.Quoted &&
			a.Wrapped == b.Wrapped && a.Suspect == b.Suspect && a.Digest == b.Digest
	}
	ref := split(false, true)
	for _, way := range []struct {
		name         string
		avx2, noFast bool
	}{{"AVX2", true, false}, {"portable", false, false}} {
		if got := split(way.avx2, way.noFast); !slices.EqualFunc(got, ref, same) {
			t.Fatalf("settings %+v, range %d, window %d: the %s scan cut %v, next() alone %v\nfile %q", sc, rb, window, way.name, got, ref, data)
		}
	}
	if msg := checkRanges(data, sc, ref, ends, 0, want, rb); msg != "" {
		t.Fatalf("settings %+v, range %d, window %d: against the byte-by-byte reading: %s\nranges %v\nfile %q", sc, rb, window, msg, ref, data)
	}
}

// FuzzSplitAgreesEveryWay: any bytes, read with each of fuzzSettings, are
// cut the same by the AVX2 masks, the portable ones and next() alone, into
// ranges that end where the byte-by-byte reading ends records.
func FuzzSplitAgreesEveryWay(f *testing.F) {
	r := rand.New(rand.NewPCG(4, 34))
	for i := range 40 {
		f.Add(randomCSV(r, 1+r.IntN(30), ",", "\n"), uint8(i), uint16(r.IntN(300)), uint16(r.IntN(300)))
		f.Add(wrappedCSV(r, 1+r.IntN(30), ",", "\n", 0.5), uint8(i), uint16(r.IntN(300)), uint16(r.IntN(300)))
	}
	f.Add([]byte("\xef\xbb\xbf1,\"a\"\n"), uint8(0), uint16(1), uint16(0))
	f.Add([]byte("1,\"a\"\"\n2,b\""), uint8(0), uint16(1), uint16(0))
	f.Add([]byte("1,\"a\\\"\n2,b\\"), uint8(2), uint16(1), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, settings uint8, rb, window uint16) {
		sc := fuzzSettings[int(settings)%len(fuzzSettings)]
		w := int64(window)
		if w < 8 {
			w = readWindow
		}
		splitEveryWay(t, sc, data, int64(rb)+1, w)
	})
}

// TestSplitAgreesEveryWayAtEverySize reads files of 0 to 200 bytes made of
// the bytes that matter, and files past several 256 KiB windows, each way.
func TestSplitAgreesEveryWayAtEverySize(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 4))
	alphabet := []string{`"`, `""`, `\`, `\"`, ",", "\n", "\r\n", "\r", ";", "|", "\t", "'", "é", "日", "a", "b", "1", "||"}
	for size := 0; size <= 200; size++ {
		for range 8 {
			var b []byte
			for len(b) < size {
				b = append(b, alphabet[r.IntN(len(alphabet))]...)
			}
			b = b[:size]
			for _, sc := range fuzzSettings {
				splitEveryWay(t, sc, b, int64(1+r.IntN(100)), int64(8+r.IntN(100)))
			}
		}
	}
	if testing.Short() {
		return
	}
	big := randomCSV(r, 12000, ",", "\n")
	big = append(big, wrappedCSV(r, 12000, ",", "\n", 0.3)...)
	big = append(big, wrappedCSV(r, 20000, ",", "\n", 0.01)...) // long unquoted stretches
	for _, rb := range []int64{64 << 10, 1 << 20} {
		splitEveryWay(t, rfc(",", "\n"), big, rb, readWindow)
	}
}

// A record whose quoted value (a line break in it) comes before a whole
// block without an enclose byte, read on by next() after the blocks (the
// window or the file ends before its delimiter), is read whole: the
// blocks' look-ahead for the next enclose byte must not hide the value's
// from next(), which then ended the record at the line break inside it.
func TestAQuotedValueBeforeAPlainBlockIsReadWhole(t *testing.T) {
	for pad := 60; pad <= 300; pad += 7 {
		data := []byte("0,z\n1,\"a\nb,c\"," + strings.Repeat("x", pad) + "\n2,\"d\ne\"," + strings.Repeat("y", pad) + "\n")
		for _, rb := range []int64{1, 40, 1 << 20} {
			for _, window := range []int64{64, 200, readWindow} {
				splitEveryWay(t, rfc(",", "\n"), data, rb, window)
			}
		}
	}
}
