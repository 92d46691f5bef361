package fileload

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"reflect"
	"testing"
)

// transcodeRows is about n bytes of RFC 4180 rows shaped like an export
// (quoted strings, bare numbers), one in every values rows holding a value
// Doris would change ("""x""": trimmed twice), and some doubled quotes and
// backslashes: a range filerange marks Suspect.
func transcodeRows(n, every int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		switch {
		case i%every == 0:
			fmt.Fprintf(&b, "%d,2026-08-20 22:13:20,\"\"\"quoted %d\"\"\",%d.00,\"note %d\"\n", i, i, i%10000, i%997)
		case i%7 == 0:
			fmt.Fprintf(&b, "%d,2026-08-20 22:13:20,\"say \"\"hi\"\", C:\\temp\",%d.00,\"note %d\"\n", i, i%10000, i%997)
		default:
			fmt.Fprintf(&b, "%d,2026-08-20 22:13:20,\"click\",%d.00,\"note %d\"\n", i, i%10000, i%997)
		}
	}
	return b.Bytes()
}

// BenchmarkTranscode measures the rewrite of a suspect range of 8 MB into
// Write's CSV: go test -bench Transcode ./dorisio/internal/fileload/.
func BenchmarkTranscode(b *testing.B) {
	data := transcodeRows(8<<20, 100)
	t := &csvTranscoder{sep: []byte(","), delim: []byte("\n"), esc: '"'}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if t.transcode(data) == nil {
			b.Fatal("not rewritten")
		}
	}
}

// TestTranscodedRangesReadAsTheFileMeansThem rewrites RFC 4180 ranges that
// hold values Doris would change, and reads the result as Doris reads
// Write's CSV (enclose '"', escape '\', a '"' pair left at both ends of an
// enclosed value trimmed): every record's values are the file's, as
// encoding/csv reads them, and no value is one Doris would change.
func TestTranscodedRangesReadAsTheFileMeansThem(t *testing.T) {
	files := map[string][]byte{
		"exported rows": transcodeRows(64<<10, 10),
		"awkward values": []byte("1,\"\"\"x\"\"\"\n2,\"a,b\nc\"\n3,\"\\N\"\n4,\"\"\"\"\n5,\"\"\n6,plain\n" +
			"7,\"say \"\"hi\"\" C:\\temp\\\"\n8,a\\b,\"\"\"\"\"\"\n9,é,\"日本\"\"\"\n10,\"\"\"ends\"\n"),
	}
	tr := &csvTranscoder{sep: []byte(","), delim: []byte("\n"), esc: '"'}
	for name, data := range files {
		t.Run(name, func(t *testing.T) {
			r := csv.NewReader(bytes.NewReader(data))
			r.FieldsPerRecord = -1
			want, err := r.ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			out := tr.transcode(data)
			if out == nil {
				t.Fatal("not rewritten")
			}
			got, changed := readWriteCSV(t, out)
			if changed != "" {
				t.Errorf("Doris would change the value %q of the rewrite", changed)
			}
			if !reflect.DeepEqual(got, want) {
				for i := range min(len(got), len(want)) {
					if !reflect.DeepEqual(got[i], want[i]) {
						t.Fatalf("record %d reads %q, the file's is %q (%d and %d records)", i, got[i], want[i], len(got), len(want))
					}
				}
				t.Fatalf("%d records read, the file has %d", len(got), len(want))
			}
		})
	}
}

// readWriteCSV reads Write's CSV (enclose '"', escape '\', records ending
// "\n"); changed is an enclosed value with '"' at both ends, which Doris'
// trim_double_quotes would change.
func readWriteCSV(t *testing.T, data []byte) (records [][]string, changed string) {
	t.Helper()
	var rec []string
	for pos := 0; pos < len(data); {
		var v []byte
		if data[pos] == '"' {
			j := pos + 1
			for ; j < len(data) && data[j] != '"'; j++ {
				if data[j] == '\\' {
					j++
				}
				v = append(v, data[j])
			}
			if raw := data[pos+1 : j]; len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
				changed = string(raw)
			}
			pos = j + 1
		} else {
			j := pos
			for j < len(data) && data[j] != ',' && data[j] != '\n' {
				j++
			}
			v, pos = data[pos:j], j
		}
		rec = append(rec, string(v))
		if pos >= len(data) || data[pos] == '\n' {
			records, rec = append(records, rec), nil
		} else if data[pos] != ',' {
			t.Fatalf("text after a closing quote at byte %d of %q", pos, data)
		}
		pos++
	}
	return records, changed
}
