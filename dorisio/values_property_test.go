package dorisio

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// randRow covers every scalar Go type Write encodes, NULLs and extremes.
type randRow struct {
	ID  int64     `doris:"id"`
	I8  int8      `doris:"i8"`
	I16 int16     `doris:"i16"`
	I32 int32     `doris:"i32"`
	U32 uint32    `doris:"u32"`
	U64 uint64    `doris:"u64"`
	B   bool      `doris:"b"`
	F   float64   `doris:"f"`
	S   string    `doris:"s"`
	P   *string   `doris:"p"`
	Raw []byte    `doris:"raw"`
	At  time.Time `doris:"at"`
	D   Decimal   `doris:"d"`
}

func init() { beam.RegisterType(reflect.TypeOf(randRow{})) }

const randDDL = "demo.r(id BIGINT, i8 TINYINT, i16 SMALLINT, i32 INT, u32 BIGINT, u64 LARGEINT, b BOOLEAN, f DOUBLE, " +
	"s STRING, p VARCHAR(200), raw STRING, at DATETIME(6), d DECIMAL(38,10))"

// awkwardRunes are the characters that break naive encoders.
var awkwardRunes = []string{`"`, `\`, ",", "\n", "\r", "\t", `\N`, "'", "é", "日本", "😀", "\x00", "\x01", "\x7f", "#", "|", " "}

func randString(r *rand.Rand) string {
	var b strings.Builder
	for n := r.Intn(6); n > 0; n-- {
		if r.Intn(3) == 0 {
			b.WriteString(string(rune('a' + r.Intn(26))))
		} else {
			b.WriteString(awkwardRunes[r.Intn(len(awkwardRunes))])
		}
	}
	return b.String()
}

func randRows(r *rand.Rand, n int) []randRow {
	zones := []*time.Location{time.UTC, time.FixedZone("A", 8*3600), time.FixedZone("B", -5*3600-1800)}
	floats := []float64{0, -0.5, 1e-300, 1e300, math.MaxFloat64, math.SmallestNonzeroFloat64, math.NaN(), math.Inf(1), math.Inf(-1)}
	out := make([]randRow, n)
	for i := range out {
		v := randRow{
			ID: int64(i), I8: int8(r.Intn(256) - 128), I16: int16(r.Intn(65536) - 32768), I32: r.Int31() - r.Int31(),
			U32: r.Uint32(), U64: r.Uint64(), B: r.Intn(2) == 1, S: randString(r), Raw: []byte(randString(r)),
		}
		if r.Intn(4) == 0 {
			v.F = floats[r.Intn(len(floats))]
		} else {
			v.F = r.NormFloat64() * math.Pow(10, float64(r.Intn(40)-20))
		}
		if r.Intn(3) > 0 {
			s := randString(r)
			v.P = &s
		}
		sec := r.Int63n(253402300799+62135596800-24*3600) - 62135596800 + 12*3600 // years 0001..9999 with room for any zone
		v.At = time.Unix(sec, r.Int63n(1e9)).In(zones[r.Intn(len(zones))])
		whole := strconv.FormatInt(r.Int63n(1e18), 10)
		v.D = Decimal(fmt.Sprintf("%s%s.%d", []string{"", "-"}[r.Intn(2)], whole, r.Intn(1e9)))
		out[i] = v
	}
	return out
}

// wantRandRow is what Doris holds for v, in doristest's canonical text.
func wantRandRow(v randRow) []string {
	f := "nan"
	switch {
	case math.IsInf(v.F, 1):
		f = "inf"
	case math.IsInf(v.F, -1):
		f = "-inf"
	case !math.IsNaN(v.F):
		e := strconv.FormatFloat(v.F, 'e', -1, 64)
		exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
		if v.F != 0 && (exp < -4 || exp >= 16) {
			f = e
		} else {
			f = strconv.FormatFloat(v.F, 'f', -1, 64)
		}
	}
	p := `\N`
	if v.P != nil {
		p = *v.P
	}
	b := "0"
	if v.B {
		b = "1"
	}
	d := string(v.D)
	ip, fp, _ := strings.Cut(d, ".")
	fp += strings.Repeat("0", 10-len(fp))
	return []string{strconv.FormatInt(v.ID, 10), strconv.Itoa(int(v.I8)), strconv.Itoa(int(v.I16)), strconv.Itoa(int(v.I32)),
		strconv.FormatUint(uint64(v.U32), 10), strconv.FormatUint(v.U64, 10), b, f, v.S, p, string(v.Raw),
		v.At.UTC().Format("2006-01-02 15:04:05.000000"), ip + "." + fp}
}

// Random rows over every supported type land exactly as written, in every
// format, Arrow too (seeded; the seed is printed so a failure can be replayed).
func TestPropertyRandomRowsRoundTrip(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	for _, f := range append(formats, Arrow) {
		t.Run(string(f), func(t *testing.T) {
			in := randRows(r, 300)
			want := make([][]string, len(in))
			for i, v := range in {
				want[i] = wantRandRow(v)
			}
			srv := startServer(t, doristest.WithTable(randDDL))
			mustWrite(t, srv, "r", in, WithFormat(f), WithMaxBatchRows(97))
			wantRows(t, srv, "r", want)
		})
	}
}
