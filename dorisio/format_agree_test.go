package dorisio

import (
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/google/uuid"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

type amountCents int64
type eventKind string

type stampedBy struct {
	Made time.Time `doris:"made"`
	Who  eventKind `doris:"who"`
}

// edgeRow has the field shapes real structs use: named types, an embedded
// struct, a Duration, a UUID, pointers, unexported and skipped fields.
type edgeRow struct {
	ID int64 `doris:"id"`
	stampedBy
	Cents amountCents   `doris:"cents"`
	Dur   time.Duration `doris:"dur"`
	PI    *int64        `doris:"pi"`
	PS    *string       `doris:"ps"`
	PT    *time.Time    `doris:"pt"`
	I64   int64         `doris:"i64"`
	F     float64       `doris:"f"`
	F32   float32       `doris:"f32"`
	D     Decimal       `doris:"d"`
	S     string        `doris:"s"`
	Raw   []byte        `doris:"raw"`
	U     uuid.UUID     `doris:"u"`
	At    time.Time     `doris:"at"`
	Day   time.Time     `doris:"day"`
	note  string
	Skip  int `doris:"-"`
}

func init() { beam.RegisterType(reflect.TypeOf(edgeRow{})) }

const edgeDDL = "demo.%s(id BIGINT, made DATETIME(6), who VARCHAR(64), cents BIGINT, dur BIGINT, pi BIGINT, ps STRING, pt DATETIME(6), " +
	"i64 BIGINT, f DOUBLE, f32 FLOAT, d DECIMAL(10,2), s STRING, raw STRING NULL, u VARCHAR(36), at DATETIME(6), day DATE)"

func edgeRows(n int) []edgeRow {
	ny, _ := time.LoadLocation("America/New_York")
	kol, _ := time.LoadLocation("Asia/Kolkata")
	strs := []string{"", `\N`, "a\tb", "a\r\nb", "\r", `"`, `a"b`, ",", "|", "\x00", "x\x01y", "日本", "😀", " lead", "trail ", `\`, `\t`, "NULL", "null", `\\N`}
	floats := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat64, math.SmallestNonzeroFloat64, 0.1, 1e16, 123456789012345678}
	decs := []Decimal{"0.12", "-0.12", "99999999.99", "-99999999.99", "0.01", "-0.01", "0.00"}
	times := []time.Time{
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC),
		time.Date(2024, 3, 10, 3, 30, 0, 0, ny), // just after the clocks went forward
		time.Date(2024, 11, 3, 1, 30, 0, 0, ny), // the repeated hour's first pass
		time.Date(2016, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(2024, 2, 29, 12, 0, 0, 1, kol),
	}
	out := make([]edgeRow, n)
	for i := range out {
		v := edgeRow{ID: int64(i), Cents: amountCents(i*1000 - 7), Dur: time.Duration(i) * 1500 * time.Millisecond,
			I64: math.MinInt64 + int64(i), F: floats[i%len(floats)], F32: float32(floats[(i+3)%len(floats)]),
			D: decs[i%len(decs)], S: strs[i%len(strs)], Raw: []byte(strs[(i+5)%len(strs)]), U: uuid.UUID{byte(i), 1, 2},
			At: times[i%len(times)], Day: time.Date(2024, 1, i%28+1, 0, 0, 0, 0, time.UTC), note: "not a column", Skip: i}
		v.stampedBy = stampedBy{Made: times[(i+1)%len(times)], Who: eventKind(strs[(i+2)%len(strs)])}
		switch i % 3 {
		case 0:
			x, s, tm := int64(i)<<40, strs[(i+7)%len(strs)], times[(i+3)%len(times)]
			v.PI, v.PS, v.PT = &x, &s, &tm
			v.I64 = math.MaxInt64 - int64(i)
		case 1:
			v.Raw = nil
			v.Day = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
		}
		out[i] = v
	}
	return out
}

// edgeText is what Read gives back for v: times in UTC to microseconds,
// neither the unexported nor the skipped field.
func edgeText(v edgeRow) string {
	tm := func(x time.Time) string { return x.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano) }
	pi, ps, pt := "nil", "nil", "nil"
	if v.PI != nil {
		pi = fmt.Sprint(*v.PI)
	}
	if v.PS != nil {
		ps = fmt.Sprintf("%q", *v.PS)
	}
	if v.PT != nil {
		pt = tm(*v.PT)
	}
	raw := "nil"
	if v.Raw != nil {
		raw = fmt.Sprintf("%q", v.Raw)
	}
	return fmt.Sprintf("id=%d made=%s who=%q cents=%d dur=%d pi=%s ps=%s pt=%s i64=%d f=%v f32=%v d=%s s=%q raw=%s u=%s at=%s day=%s",
		v.ID, tm(v.Made), v.Who, v.Cents, v.Dur, pi, ps, pt, v.I64, v.F, v.F32, v.D, v.S, raw, v.U, tm(v.At), v.Day.Format(time.DateOnly))
}

// The same rows of every field shape, through CSV, JSON and Arrow, leave
// the same table, and Read gives each back as it was written.
func TestEveryFieldShapeLandsTheSameInEveryFormatAndReadsBack(t *testing.T) {
	in := edgeRows(60)
	fs := []Format{CSV, JSON, Arrow}
	var opts []doristest.Option
	for _, f := range fs {
		opts = append(opts, doristest.WithTable(fmt.Sprintf(edgeDDL, "edge_"+string(f))))
	}
	srv := startServer(t, opts...)
	want := map[int64]string{}
	for _, v := range in {
		want[v.ID] = edgeText(v)
	}
	var first [][]string
	for _, f := range fs {
		table := "edge_" + string(f)
		if err := writeAll(t, srv, table, in, WithFormat(f)); err != nil {
			t.Fatalf("%s: %v: %s", f, KindOf(err), ErrorMessage(err))
		}
		if first == nil {
			first = srv.Rows("demo", table)
		} else {
			wantRows(t, srv, table, first)
		}
		got, _, err := readAll(t, configFor(srv, table), Query{}, reflect.TypeOf(edgeRow{}))
		if err != nil {
			t.Fatalf("read %s: %s", f, ErrorMessage(err))
		}
		if len(got) != len(in) {
			t.Errorf("%s: read %d rows, want %d", f, len(got), len(in))
		}
		for _, g := range got {
			r := g.(edgeRow)
			if s := edgeText(r); s != want[r.ID] {
				t.Errorf("%s: read\n %s\nwant\n %s", f, s, want[r.ID])
			}
		}
	}
}
