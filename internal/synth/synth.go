// Package synth generates the synthetic events that pipelines/load writes
// and the benchmarks measure, so that both use the same rows.
package synth

import "strconv"

// EventsDDL is the schema of the synthetic tables (fmt: database, table),
// used for the embedded server; create the same tables in a real Doris (see README).
const EventsDDL = "%s.%s(id BIGINT NOT NULL, ts DATETIME, user_id BIGINT, kind VARCHAR(16), amount DECIMAL(12,2), note VARCHAR(64))"

// TableNames returns the n synthetic tables' names, base_0 .. base_{n-1};
// event id goes to names[id%n]. Build them once: routing is per row.
func TableNames(base string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = base + "_" + strconv.Itoa(i)
	}
	return names
}

// RowsPerTable is how many of events 0 .. n-1 go to table i of tables.
func RowsPerTable(n int64, tables, i int) int64 {
	q, r := n/int64(tables), n%int64(tables)
	if int64(i) < r {
		return q + 1
	}
	return q
}

var kinds = [...]string{"click", "view", "purchase", "signup", "logout"}

// AppendEvent appends event id as a CSV row of EventsDDL's columns
// (strconv, not fmt: the generator must not be the benchmark's bottleneck).
func AppendEvent(b []byte, id int64) []byte {
	ts := 1_700_000_000 + id
	b = strconv.AppendInt(b, id, 10)
	b = append(b, ",2026-"...)
	b = append2(b, 1+(ts/2_592_000)%12)
	b = append(b, '-')
	b = append2(b, 1+(ts/86400)%28)
	b = append(b, ' ')
	b = append2(b, (ts/3600)%24)
	b = append(b, ':')
	b = append2(b, (ts/60)%60)
	b = append(b, ':')
	b = append2(b, ts%60)
	b = append(b, ',')
	b = strconv.AppendInt(b, id%100_003, 10)
	b = append(b, ",\""...)
	b = append(b, kinds[id%int64(len(kinds))]...)
	b = append(b, "\","...)
	b = strconv.AppendInt(b, id%10_000, 10)
	b = append(b, '.')
	b = append2(b, id%100)
	b = append(b, ",\"note "...)
	b = strconv.AppendInt(b, id%997, 10)
	return append(b, "\"\n"...)
}

func append2(b []byte, v int64) []byte { return append(b, byte('0'+v/10), byte('0'+v%10)) }
