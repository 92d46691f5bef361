package filerange

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A large local file is read through a mapping; its ranges (bounds,
// records, digests, marks) are those of the same bytes read, for every
// window size, with a record longer than the window, a byte-order mark,
// header lines, CRLF lines, quoted and bare values.
func TestAMappedFileSplitsAsTheSameBytesRead(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("\xef\xbb\xbfid,name,note\n")
	for i := 0; b.Len() < mapMin+(1<<20); i++ {
		switch {
		case i%5000 == 7:
			fmt.Fprintf(&b, "%d,\"%s\",x\n", i, strings.Repeat("long ", 30_000)) // longer than the small windows
		case i%1000 == 3:
			fmt.Fprintf(&b, "%d,\"a \"\"quoted\"\" line\nbreak\",\"%d\"\r\n", i, i)
		case i%2 == 0:
			fmt.Fprintf(&b, "%d,\"name %d\",plain\n", i, i)
		default:
			fmt.Fprintf(&b, "%d,bare %d,\"note\"\n", i, i)
		}
	}
	data := b.Bytes()
	path := filepath.Join(t.TempDir(), "big.csv")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, window := range []int64{0, 64 << 10, 1 << 20} {
		split := func(read func(*Splitter, func(Range) error) error) ([]Range, error) {
			sp := &Splitter{sc: rfc(",", "\n"), rangeBytes: 1 << 20, headerLines: 1, window: window, SkipBOM: true}
			sp.CheckLineEnds(true)
			var got []Range
			err := read(sp, func(fr Range) error { got = append(got, fr); return nil })
			return got, err
		}
		want, err := split(func(sp *Splitter, emit func(Range) error) error {
			return sp.Split(bytes.NewReader(data), int64(len(data)), emit)
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := split(func(sp *Splitter, emit func(Range) error) error {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			if m := mapFile(f, int64(len(data))); m == nil {
				t.Fatal("a local file of mapMin bytes or more is not mapped")
			} else {
				m.close()
				f.Seek(0, 0)
			}
			return sp.Split(f, int64(len(data)), emit)
		})
		if err != nil {
			t.Fatalf("window %d: %v", window, err)
		}
		if len(got) < 4 || !reflect.DeepEqual(got, want) {
			t.Errorf("window %d: mapped file split into %d ranges, the same bytes read into %d; first differences:\n%s", window, len(got), len(want), firstDiff(got, want))
		}
	}
}

func firstDiff(got, want []Range) string {
	for i := range min(len(got), len(want)) {
		if !reflect.DeepEqual(got[i], want[i]) {
			return fmt.Sprintf("range %d: got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	return "one is a prefix of the other"
}

// A file cut shorter while it is split fails the split with the sizes, as
// a short read does, and does not crash the process (the mapping's pages
// past the new end fault); one that grew fails as a longer read does.
func TestAMappedFileThatChangesWhileSplitIsRefused(t *testing.T) {
	line := "1,\"name\",note\n"
	data := []byte(strings.Repeat(line, (mapMin+(2<<20))/len(line)))
	for _, c := range []struct {
		name   string
		change func(path string) error
		want   string
	}{
		{"cut", func(path string) error { return os.Truncate(path, 1<<20) }, fmt.Sprintf("ended after %d of the %d bytes", 1<<20, len(data))},
		{"grown", func(path string) error {
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteString(line)
			return err
		}, fmt.Sprintf("more than the %d bytes", len(data))},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "changing.csv")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sp := &Splitter{sc: rfc(",", "\n"), rangeBytes: 64 << 10, window: 64 << 10}
			changed := false
			err = sp.Split(f, int64(len(data)), func(Range) error {
				if !changed {
					changed = true
					return c.change(path)
				}
				return nil
			})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("split of a file %s while it was read: %v, want an error saying %q", c.name, err, c.want)
			}
		})
	}
}

// BenchmarkSplitLocalFile splits a 64 MB file of the benchmark's rows from
// the page cache, read into the window and through a mapping: go test
// -bench SplitLocalFile.
func BenchmarkSplitLocalFile(b *testing.B) {
	data := benchEvents(64 << 20)
	path := filepath.Join(b.TempDir(), "events.csv")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		wrap func(*os.File) io.Reader
	}{
		{"read", func(f *os.File) io.Reader { return struct{ io.Reader }{f} }},
		{"mapped", func(f *os.File) io.Reader { return f }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				sp := &Splitter{sc: rfc(",", "\n"), rangeBytes: 64 << 20, SkipBOM: true}
				sp.CheckLineEnds(false)
				if err := sp.Split(c.wrap(f), int64(len(data)), func(Range) error { return nil }); err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
		})
	}
}
