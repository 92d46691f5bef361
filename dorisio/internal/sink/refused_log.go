package sink

// Naming the rows of a refused load from Doris' error log (isolate.go).
//
// The log (docs/protocol.md §7) holds up to 51 of the rows Doris filtered,
// not in row order, each shown as the stage that refused it saw it: the
// reader shows the line as read (a wrong field count, a line that is not
// UTF-8, a JSON document it cannot read; JSON objects it re-encodes
// compactly), the conversion shows the row's source values joined by one
// space, NULL as "NULL" (a value strict mode refuses, NULL into NOT NULL),
// and the table sink shows nothing (a string longer than its column, a
// decimal beyond its precision), its reason naming the value: the first 32
// bytes and the length of a string, the value of a decimal.
//
// A record is named only when what Doris showed picks it out: every record
// of the body that matches the entry holds the same bytes (equal records
// are refused alike: a row's refusal depends on its own values), or, for
// the sink's entries, the matching values all sit in the same field (a
// value of that length in that field is too long for every row that holds
// it). An entry that matches records of different bytes names none: the
// rows it could mean are left to the next load, or to probing. So a record
// named is a record Doris refuses, whatever the path that named it.

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/filerange"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// recordShown calls f with each way Doris may show record i in its log:
// the record as read, JSON compacted, its source values joined by a space.
func (is *isolation) recordShown(i int, f func(string)) {
	rec := is.record(i)
	f(string(rec))
	if is.json {
		var c bytes.Buffer
		if json.Compact(&c, rec) == nil && c.Len() != len(rec) {
			f(c.String())
		}
	}
	if is.json && len(is.columns) == 0 {
		return // the source columns, and so their order, are the table's: unknown here
	}
	var joined strings.Builder
	n := 0
	is.fields(rec, func(_ string, v []byte, null bool) {
		if n > 0 {
			joined.WriteByte(' ')
		}
		n++
		if null {
			joined.WriteString("NULL")
		} else {
			joined.Write(v)
		}
	})
	if n > 0 {
		f(joined.String())
	}
}

// nameFromLog names the records of body (record indices, none named yet)
// that the entries of Doris' refusal of body pick out, and returns how
// many it named. It reads the body once for the entries that show a row
// and once for those that name a value, keeping nothing per record.
func (is *isolation) nameFromLog(refusal error, body []int) int {
	e, ok := asLoadError(refusal)
	if !ok || len(e.Refused) == 0 {
		return 0
	}
	entries := e.Refused
	// The rows shown: each entry's readings by their hash.
	type reading struct{ entry, alt int }
	want := map[uint64][]reading{}
	var sinks []func(field string, v []byte) bool
	sinkOf := map[int]int{} // entry → its sink matcher
	for i, en := range entries {
		if en.Src == "" && len(en.Alt) == 0 {
			if m := sinkMatcher(en.Reason); m != nil {
				sinkOf[i] = len(sinks)
				sinks = append(sinks, func(_ string, v []byte) bool { return m(v) })
			}
			continue
		}
		for a, src := range append([]string{en.Src}, en.Alt...) {
			h := xxhash.Sum64String(src)
			want[h] = append(want[h], reading{i, a})
		}
	}
	// matched[i][a]: the records reading a of entry i shows; field[k]: the
	// field sink matcher k found its value in, "?" once in two fields.
	matched := make([]map[int][]int, len(entries))
	fieldOf := make([]string, len(sinks))
	sinkRecs := make([][]int, len(sinks))
	for _, r := range body {
		if len(want) > 0 {
			is.recordShown(r, func(s string) {
				for _, rd := range want[xxhash.Sum64String(s)] {
					en := entries[rd.entry]
					src := en.Src
					if rd.alt > 0 {
						src = en.Alt[rd.alt-1]
					}
					if src != s {
						continue // a hash collision
					}
					if matched[rd.entry] == nil {
						matched[rd.entry] = map[int][]int{}
					}
					if recs := matched[rd.entry][rd.alt]; len(recs) == 0 || recs[len(recs)-1] != r {
						matched[rd.entry][rd.alt] = append(recs, r)
					}
				}
			})
		}
		if len(sinks) > 0 {
			hit := make([]string, len(sinks))
			is.fields(is.record(r), func(name string, v []byte, null bool) {
				for k, m := range sinks {
					if !null && hit[k] == "" && m(name, v) {
						hit[k] = name
					}
				}
			})
			for k, h := range hit {
				switch {
				case h == "":
				case fieldOf[k] == "" || fieldOf[k] == h:
					fieldOf[k] = h
					sinkRecs[k] = append(sinkRecs[k], r)
				default:
					fieldOf[k] = "?" // the value sits in two fields: which column is it?
				}
			}
		}
	}
	named := map[int]string{} // record → reason
	for i, en := range entries {
		var recs []int
		if k, ok := sinkOf[i]; ok {
			if fieldOf[k] != "?" {
				recs = sinkRecs[k] // a value of that length, or that decimal, in that field: refused alike
			}
		} else {
			for a := 0; a <= len(en.Alt); a++ {
				if recs = matched[i][a]; len(recs) > 0 {
					break
				}
			}
			if !is.sameBytes(recs) {
				recs = nil // records of different bytes look alike to Doris
			}
		}
		for _, r := range recs {
			if _, done := named[r]; !done {
				named[r] = en.Reason
			}
		}
	}
	if len(named) == 0 {
		return 0
	}
	// Equal records are refused alike: every record of the body that holds
	// the bytes of a named one goes with it.
	reasonOf := map[uint64][]int{}
	for r := range named {
		h := xxhash.Sum64(is.record(r))
		reasonOf[h] = append(reasonOf[h], r)
	}
	for _, r := range body {
		if _, done := named[r]; done {
			continue
		}
		for _, n := range reasonOf[xxhash.Sum64(is.record(r))] {
			if bytes.Equal(is.record(n), is.record(r)) {
				named[r] = named[n]
				break
			}
		}
	}
	for r, reason := range named {
		is.reason[r] = reason
	}
	return len(named)
}

// sameBytes reports whether the records recs all hold the same bytes.
func (is *isolation) sameBytes(recs []int) bool {
	for _, r := range recs[min(1, len(recs)):] {
		if !bytes.Equal(is.record(recs[0]), is.record(r)) {
			return false
		}
	}
	return true
}

// The reasons of the table sink's checks name a value and no row
// (vtablet_block_convertor.cpp): a string's first 32 bytes and its length,
// or a decimal.
var (
	tooLongReason = regexp.MustCompile(`^column_name\[.*?\], the length of input (?:string )?is too long than (?:vec )?schema\. first 32 bytes of input str: \[(.*)\] schema length: -?\d+; (?:limit length: \d+; )?actual length: (\d+); ?$`)
	decimalReason = regexp.MustCompile(`^column_name\[.*?\], decimal value is not valid for definition, value=([^,]*), precision=`)
)

// sinkMatcher returns what matches the value a sink reason names, nil for
// another reason.
func sinkMatcher(reason string) func(v []byte) bool {
	if m := tooLongReason.FindStringSubmatch(reason); m != nil {
		n, err := strconv.Atoi(m[2])
		if err != nil {
			return nil
		}
		prefix := m[1]
		return func(v []byte) bool { return len(v) == n && strings.HasPrefix(string(v), prefix) }
	}
	if m := decimalReason.FindStringSubmatch(reason); m != nil && m[1] != "" {
		return func(v []byte) bool { return string(v) == m[1] }
	}
	return nil
}

// fields calls f with each source value of rec as Doris' reader makes it
// (protocol §3, §13): its name (a CSV field's number, a JSON key), the
// value, and whether it is NULL.
func (is *isolation) fields(rec []byte, f func(name string, v []byte, null bool)) {
	if is.json {
		is.jsonFields(rec, f)
		return
	}
	csvFields(rec, is.sc, is.trimQuotes, func(i int, v []byte, null bool) { f(strconv.Itoa(i), v, null) })
}

// csvFields splits rec, a CSV record without its line delimiter, into its
// values: a field that starts with the enclose runs to its closing enclose
// (a doubled one, or one after the escape, is literal) and loses the
// enclosing pair; with an escape other than the enclose, an escaped byte
// is literal in any field (§13); \N, quoted or not, is NULL. With trim
// (trim_double_quotes), a field not enclosed loses a '"' at both ends.
func csvFields(rec []byte, sc filerange.Syntax, trim bool, f func(i int, v []byte, null bool)) {
	esc := sc.Escape != 0 && sc.Escape != sc.Enclose
	var val []byte
	for i, pos := 0, 0; ; i++ {
		val = val[:0]
		start := pos
		if sc.Enclose != 0 && pos < len(rec) && rec[pos] == sc.Enclose {
			pos++
			for pos < len(rec) {
				c := rec[pos]
				switch {
				case esc && c == sc.Escape && pos+1 < len(rec):
					val = append(val, rec[pos+1])
					pos += 2
					continue
				case c == sc.Enclose && pos+1 < len(rec) && rec[pos+1] == sc.Enclose:
					val = append(val, c)
					pos += 2
					continue
				case c == sc.Enclose:
					pos++
				default:
					val = append(val, c)
					pos++
					continue
				}
				break
			}
			if pos < len(rec) && !filerange.HasAt(rec, pos, sc.Sep) { // text after the closing enclose: as written
				end := len(rec)
				if j := filerange.IndexOf(rec[pos:], sc.Sep); j >= 0 {
					end = pos + j
				}
				val, pos = append(val[:0], rec[start:end]...), end
			}
		} else {
			end := len(rec)
			if j := filerange.IndexOf(rec[pos:], sc.Sep); j >= 0 {
				end = pos + j
			}
			raw := rec[pos:end]
			pos = end
			if esc && string(raw) != `\N` {
				for k := 0; k < len(raw); k++ {
					if raw[k] == sc.Escape && k+1 < len(raw) {
						k++
					}
					val = append(val, raw[k])
				}
			} else {
				val = append(val, raw...)
			}
			if trim && len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
				val = append(val[:0], val[1:len(val)-1]...)
			}
		}
		f(i, val, string(rec[start:pos]) == `\N` || string(rec[start:pos]) == `"\N"`)
		if pos >= len(rec) {
			return
		}
		pos += len(sc.Sep)
	}
}

// jsonFields calls f with the values of a JSON record in the order of the
// load's "columns" header (else its keys, sorted), as Doris' JSON reader
// makes them: strings as they are, numbers as written, true/false as 1/0,
// objects and arrays as JSON, null and missing keys NULL.
func (is *isolation) jsonFields(rec []byte, f func(name string, v []byte, null bool)) {
	d := json.NewDecoder(bytes.NewReader(rec))
	d.UseNumber()
	var m map[string]any
	if d.Decode(&m) != nil {
		return
	}
	names := is.columns
	if len(names) == 0 {
		for k := range m {
			names = append(names, k)
		}
		slices.Sort(names)
	}
	for _, name := range names {
		v, ok := m[name]
		if !ok {
			for k, kv := range m {
				if strings.EqualFold(k, name) {
					v, ok = kv, true
					break
				}
			}
		}
		switch x := v.(type) {
		case nil:
			f(name, nil, true)
		case string:
			f(name, []byte(x), false)
		case json.Number:
			f(name, []byte(x), false)
		case bool:
			f(name, []byte(map[bool]string{true: "1", false: "0"}[x]), false)
		default:
			b, _ := json.Marshal(x)
			f(name, b, false)
		}
	}
}

// asLoadError returns the Stream Load error err wraps.
func asLoadError(err error) (*streamload.Error, bool) {
	var e *streamload.Error
	ok := err != nil && errors.As(err, &e)
	return e, ok
}
