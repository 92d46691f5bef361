package dorisio

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/internal/longtest"
)

// allTypes has a field of every Doris type Write's value checks know,
// NULL through pointers, maps and slices.
type allTypes struct {
	ID   int64            `doris:"id"`
	TI   int8             `doris:"ti"`
	SI   int16            `doris:"si"`
	I    int32            `doris:"i"`
	BI   *int64           `doris:"bi"`
	LI   *big.Int         `doris:"li"`
	B    bool             `doris:"b"`
	F    float32          `doris:"f"`
	D    float64          `doris:"d"`
	Dec  Decimal          `doris:"dec"`
	Wide string           `doris:"wide"` // DECIMAL(38,10) as text
	Ch   string           `doris:"ch"`
	Vc   *string          `doris:"vc"`
	S    []byte           `doris:"s"`
	Dt   time.Time        `doris:"dt"`
	TS   time.Time        `doris:"ts"`
	TS3  *time.Time       `doris:"ts3"`
	TS6  time.Time        `doris:"ts6"`
	J    json.RawMessage  `doris:"j"`
	Doc  *jsonDoc         `doris:"doc"`
	Arr  []int32          `doris:"arr"`
	Tags []string         `doris:"tags"`
	M    map[string]int32 `doris:"m"`
	St   *pair            `doris:"st"`
}

type jsonDoc struct {
	K string `json:"k"`
	N []int  `json:"n"`
}

type pair struct {
	A int32   `doris:"a"`
	B *string `doris:"b"`
}

// genAllTypesFn emits genAllTypes(N): rows made in the pipeline reach
// Write without Beam's coder, which drops a *big.Int's value (big.Int has
// no exported fields; beam.Create of such rows writes 0).
type genAllTypesFn struct{ N int }

func (fn *genAllTypesFn) ProcessElement(_ []byte, emit func(allTypes)) {
	for _, r := range genAllTypes(fn.N) {
		emit(r)
	}
}

// writeAllTypes writes genAllTypes(n) into table with Write.
func writeAllTypes(t *testing.T, srv *doristest.Server, table string, n int) []allTypes {
	t.Helper()
	_, err := runPipeline(t, func(s beam.Scope) {
		Write(s, configFor(srv, table), beam.ParDo(s, &genAllTypesFn{N: n}, beam.Impulse(s)), WithFormat(JSON))
	})
	if err != nil {
		t.Fatal(err)
	}
	return genAllTypes(n)
}

func init() {
	register.DoFn2x0[[]byte, func(allTypes)](&genAllTypesFn{})
	register.Emitter1[allTypes]()
	for _, v := range []any{allTypes{}, jsonDoc{}, pair{}, idOnly{}, wrongString{}, wrongInt{}, wrongElems{}, mayBeNull{}, zoned{}, unsignedRow{}} {
		beam.RegisterType(reflect.TypeOf(v))
	}
}

const allTypesDDL = "demo.%s(id BIGINT NOT NULL, ti TINYINT, si SMALLINT, i INT, bi BIGINT, li LARGEINT, b BOOLEAN, f FLOAT, d DOUBLE, " +
	"dec DECIMAL(12,2), wide DECIMAL(38,10), ch CHAR(8), vc VARCHAR(64), s STRING, dt DATE, ts DATETIME, ts3 DATETIME(3), ts6 DATETIME(6), " +
	"j JSON, doc JSON, arr ARRAY<INT>, tags ARRAY<VARCHAR(16)>, m MAP<VARCHAR(16),INT>, st STRUCT<a:INT,b:VARCHAR(16)>) " +
	"DISTRIBUTED BY HASH(id) BUCKETS 16"

var awkwardTexts = []string{"plain", `quo"te`, `back\slash`, "com,ma", "new\nline", "tab\there", `\N`, "日本語", ""}

// genAllTypes makes n rows of every type; row i is the same in every run.
func genAllTypes(n int) []allTypes {
	out := make([]allTypes, n)
	for i := range out {
		r := rand.New(&splitMix{uint64(i)})
		s := awkwardTexts[i%len(awkwardTexts)]
		base := time.Unix(r.Int63n(4102444800), 0).UTC() // 1970..2100
		li := new(big.Int).Lsh(big.NewInt(r.Int63()), uint(r.Intn(64)))
		if i%2 == 1 {
			li.Neg(li)
		}
		ts3 := base.Add(time.Duration(r.Intn(1000)) * time.Millisecond)
		v := allTypes{
			ID: int64(i), TI: int8(r.Intn(256) - 128), SI: int16(r.Intn(65536) - 32768), I: r.Int31() - 1<<30,
			LI: li, B: i%3 == 0, F: float32(r.NormFloat64()), D: r.NormFloat64() * 1e6,
			Dec:  Decimal(fmt.Sprintf("%d.%02d", r.Int63n(1e10)-5e9, r.Intn(100))),
			Wide: fmt.Sprintf("%d%018d.%010d", r.Int63n(1e9)+1, r.Int63n(1e18), r.Int63n(1e10)),
			Ch:   fmt.Sprintf("c%d", i%1_000_000), S: []byte(s + fmt.Sprint(i)),
			Dt: time.Date(base.Year(), base.Month(), base.Day(), 0, 0, 0, 0, time.UTC), TS: base, TS3: &ts3,
			TS6: base.Add(time.Duration(r.Intn(1e6)) * time.Microsecond),
			J:   json.RawMessage(fmt.Sprintf(`{"a":%d,"b":[true,null,"x"]}`, i)),
			Arr: []int32{int32(i), -int32(i), r.Int31()}, Tags: []string{s, "t"},
			M: map[string]int32{"k" + fmt.Sprint(i%10): int32(i)}, St: &pair{A: int32(i), B: &s},
		}
		if i%4 == 0 {
			v.Wide = "-" + v.Wide
		}
		switch i % 7 {
		case 0: // NULL wherever a field can hold it
			v.LI, v.TS3, v.Doc, v.Arr, v.M, v.St = nil, nil, nil, nil, nil, nil
		case 1:
			v.Arr, v.Tags, v.M = []int32{}, []string{}, map[string]int32{}
			v.St = &pair{A: 1}
		default:
			bi, vc := r.Int63()-1<<62, s
			v.BI, v.Vc = &bi, &vc
			v.Doc = &jsonDoc{K: s, N: []int{i, 2}}
		}
		out[i] = v
	}
	return out
}

// splitMix is a rand.Source cheap to seed per row (rand.NewSource fills
// 607 words per seed).
type splitMix struct{ x uint64 }

func (s *splitMix) Uint64() uint64 {
	s.x += 0x9e3779b97f4a7c15
	z := s.x
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
func (s *splitMix) Int63() int64    { return int64(s.Uint64() >> 1) }
func (s *splitMix) Seed(seed int64) { s.x = uint64(seed) }

// keysOf renders rows for a multiset comparison: every field's value,
// pointers followed, instants with their zones.
func keysOf[T any](t *testing.T, rows []T) []string {
	t.Helper()
	out := make([]string, len(rows))
	for i, r := range rows {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	slices.Sort(out)
	return out
}

// wantSameRows fails unless got (elements read) and want are the same
// multiset, value for value. Rows are ordered by their id field (the
// first), then compared one by one; two rows that differ are shown as
// JSON (which also settles representations DeepEqual tells apart, such
// as a big.Int's).
func wantSameRows[T any](t *testing.T, got []any, want []T) {
	t.Helper()
	typed := make([]T, len(got))
	for i, g := range got {
		v, ok := g.(T)
		if !ok {
			t.Fatalf("element %d is a %T, want %T", i, g, typed[0])
		}
		typed[i] = v
	}
	if len(typed) != len(want) {
		t.Fatalf("read %d rows, want %d", len(typed), len(want))
	}
	id := func(v T) int64 { return reflect.ValueOf(v).Field(0).Int() }
	byID := func(a, b T) int { return int(id(a) - id(b)) }
	want = slices.Clone(want)
	slices.SortFunc(typed, byID)
	slices.SortFunc(want, byID)
	for i := range typed {
		if reflect.DeepEqual(typed[i], want[i]) {
			continue
		}
		if k := keysOf(t, []T{typed[i], want[i]}); k[0] != k[1] || id(typed[i]) != id(want[i]) {
			g, w := keysOf(t, typed[i:i+1]), keysOf(t, want[i:i+1])
			t.Fatalf("read row\n%s\nwhere\n%s\nwas expected (position %d by id)", g[0], w[0], i)
		}
	}
}

func TestReadReturnsEveryValueOfEveryTypeOnceSplitByTablets(t *testing.T) {
	n := longtest.Pick(20_000, 200_000) // go test ./... reads 20,000 rows; -tags long 200,000
	if testing.Short() {
		n = 20_000
	}
	progress := longtest.NewProgress(t)
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(allTypesDDL, "all")))
	start := time.Now()
	rows := writeAllTypes(t, srv, "all", n)
	progress.Printf("wrote %d rows in %v", n, time.Since(start))

	start = time.Now()
	got, res, err := readAll(t, configFor(srv, "all"), Query{TabletsPerSplit: 4}, reflect.TypeOf(allTypes{}))
	if err != nil {
		t.Fatal(err)
	}
	progress.Printf("read %d rows in %v", len(got), time.Since(start))
	start = time.Now()
	wantSameRows(t, got, rows)
	t.Logf("compared in %v", time.Since(start))
	st := srv.FlightStats()
	if st.TabletQueries != 4 || st.MaxQueriesPerSession != 1 || st.DroppedResults != 0 {
		t.Errorf("server saw %+v: want 4 split queries (16 tablets, 4 per split), never 2 queries in flight on a session", st)
	}
	if st.OpenSessions != 0 {
		t.Errorf("%d Flight sessions left open", st.OpenSessions)
	}
	if r := counter(res, "read_rows"); r != int64(n) {
		t.Errorf("metric read_rows %d, want %d", r, n)
	}

	even, _, err := readAll(t, configFor(srv, "all"), Query{TabletsPerSplit: 4, Where: "id % 2 = 0"}, reflect.TypeOf(allTypes{}))
	if err != nil {
		t.Fatal(err)
	}
	var want []allTypes
	for _, r := range rows {
		if r.ID%2 == 0 {
			want = append(want, r)
		}
	}
	wantSameRows(t, even, want)
	if st := srv.FlightStats(); st.TabletQueries != 8 || st.MaxQueriesPerSession != 1 {
		t.Errorf("server saw %+v after the filtered read: want 8 split queries in all, one in flight per session", st)
	}
}

// idOnly reads a table's ids.
type idOnly struct {
	ID   int64  `doris:"id"`
	Name string `doris:"name"`
}

const idsDDL = "demo.%s(id BIGINT NOT NULL, name VARCHAR(16)) DISTRIBUTED BY HASH(id) BUCKETS 8"

// idTable is a table of n rows of 8 tablets.
func idTable(t *testing.T, n int, opts ...doristest.Option) (*doristest.Server, []idOnly) {
	t.Helper()
	return idTableOf(t, fmt.Sprintf(idsDDL, "ids"), n, opts...)
}

// idTableOf is idTable of a table demo.ids made by ddl.
func idTableOf(t *testing.T, ddl string, n int, opts ...doristest.Option) (*doristest.Server, []idOnly) {
	t.Helper()
	srv := startServer(t, append([]doristest.Option{doristest.WithTable(ddl)}, opts...)...)
	rows := make([]idOnly, n)
	for i := range rows {
		rows[i] = idOnly{ID: int64(i), Name: fmt.Sprintf("n%d", i)}
	}
	mustWrite(t, srv, "ids", rows)
	return srv, rows
}

func TestASplitWhoseFetchFailsHalfwayIsReadAgainWhole(t *testing.T) {
	srv, rows := idTable(t, 40_000)
	h := srv.Inject(doristest.Fault{Kind: doristest.DoGetFails, Count: 1})
	got, res, err := readAll(t, configFor(srv, "ids"), Query{TabletsPerSplit: 2}, reflect.TypeOf(idOnly{}))
	if err != nil {
		t.Fatal(err)
	}
	wantSameRows(t, got, rows)
	if h.Hits() != 1 || counter(res, "read_split_reruns") != 1 {
		t.Errorf("fault hits %d, split reruns %d: want the failed split run once more", h.Hits(), counter(res, "read_split_reruns"))
	}
	if st := srv.FlightStats(); st.TabletQueries != 5 || st.FailedFetches != 1 {
		t.Errorf("server saw %+v: want 4 splits and the failed one again", st)
	}
}

// One split at a time: the bundle's session runs its splits one after
// another, so the eviction meets its second query.
func TestASessionEvictedBetweenSplitsIsReplaced(t *testing.T) {
	srv, rows := idTable(t, 2000)
	h := srv.Inject(doristest.Fault{Kind: doristest.TokenEvicted, Count: 1})
	got, res, err := readAll(t, configFor(srv, "ids"), Query{TabletsPerSplit: 2}, reflect.TypeOf(idOnly{}), WithReadSplitsInFlight(1))
	if err != nil {
		t.Fatal(err)
	}
	wantSameRows(t, got, rows)
	st := srv.FlightStats()
	if h.Hits() != 1 || st.Sessions != 2 || st.TabletQueries != 4 || counter(res, "read_split_reruns") != 0 {
		t.Errorf("fault hits %d, server %+v, reruns %d: want one eviction, a second handshake, 4 queries, no rerun", h.Hits(), st, counter(res, "read_split_reruns"))
	}
}

func TestAnEndpointAtTheUnspecifiedAddress(t *testing.T) {
	srv, rows := idTable(t, 100)
	srv.Inject(doristest.Fault{Kind: doristest.UnspecifiedEndpoint})
	_, _, err := readAll(t, configFor(srv, "ids"), Query{}, reflect.TypeOf(idOnly{}))
	wantErr(t, err, "dorisio.Read: table demo.ids, split 1 of 1 (tablets 10001,", "grpc+tcp://0.0.0.0:",
		`dorisio.WithEndpointRewrite("0.0.0.0:`, "public_host")
	if st := srv.FlightStats(); st.TabletQueries != 1 {
		t.Errorf("%d queries: an endpoint no worker can reach is not a reason to run the split again", st.TabletQueries)
	}
	got, _, err := readAll(t, configFor(srv, "ids"), Query{}, reflect.TypeOf(idOnly{}), WithEndpointRewrite("0.0.0.0", "127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	wantSameRows(t, got, rows)
}

func TestAQueryDorisAnswersWithoutAnEndpointFailsInItsWords(t *testing.T) {
	srv, _ := idTable(t, 10)
	srv.Inject(doristest.Fault{Kind: doristest.NoEndpoint})
	_, _, err := readAll(t, configFor(srv, "ids"), Query{Where: "id = 3"}, reflect.TypeOf(idOnly{}))
	wantErr(t, err, "dorisio.Read: table demo.ids, split 1 of 1", "Execute on the FE at 127.0.0.1:",
		"fetch arrow flight schema failed, no FlightSqlEndpointsLocations", "apache/doris#67368", "enable_short_circuit_query=false")
	if st := srv.FlightStats(); st.TabletQueries != 1 {
		t.Errorf("%d queries: Doris' deterministic refusal is not retried", st.TabletQueries)
	}
}

type wrongString struct {
	ID string `doris:"id"`
}

type wrongInt struct {
	ID  int64 `doris:"id"`
	Dec int64 `doris:"dec"`
}

type wrongElems struct {
	ID  int64    `doris:"id"`
	Arr []string `doris:"arr"`
}

func TestAFieldThatCannotHoldItsColumnFailsBeforeAnyRow(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(allTypesDDL, "all")))
	writeAllTypes(t, srv, "all", 10)
	for _, tt := range []struct {
		elem  any
		parts []string
	}{
		{wrongString{}, []string{"field wrongString.ID cannot take column id BIGINT (Arrow int64): a string cannot hold every BIGINT value; use int64"}},
		{wrongInt{}, []string{"field wrongInt.Dec cannot take column dec DECIMAL(12,2) (Arrow decimal(12, 2)): a int64 cannot hold every DECIMAL(12,2) value; use dorisio.Decimal, string or *big.Rat"}},
		{wrongElems{}, []string{", split ", "field wrongElems.Arr cannot take column arr ARRAY (Arrow list<item: int32, nullable>): element: a string cannot hold every INT value; use int32"}},
	} {
		before := srv.FlightStats().Fetches
		_, _, err := readAll(t, configFor(srv, "all"), Query{}, reflect.TypeOf(tt.elem))
		wantErr(t, err, append([]string{"dorisio.Read: table demo.all"}, tt.parts...)...)
		if reflect.TypeOf(tt.elem) != reflect.TypeOf(wrongElems{}) && srv.FlightStats().Fetches != before {
			t.Errorf("%T: rows were fetched before the mismatch was found", tt.elem)
		}
	}
}

type mayBeNull struct {
	ID int64 `doris:"id"`
	BI int64 `doris:"bi"`
}

func TestANullInAFieldThatCannotHoldItNamesTheRowAndColumn(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(allTypesDDL, "all")))
	writeAllTypes(t, srv, "all", 1) // row 0: bi NULL
	_, _, err := readAll(t, configFor(srv, "all"), Query{}, reflect.TypeOf(mayBeNull{}))
	wantErr(t, err, "row 1, column bi BIGINT into field mayBeNull.BI: NULL: a int64 cannot hold it; make the field a pointer (*int64)")
	// The failed split's session is closed: an abandoned one holds an FE
	// connection slot until its token expires, and prism never tears the
	// DoFn down.
	if st := srv.FlightStats(); st.OpenSessions != 0 {
		t.Errorf("%d Flight sessions left open after the read failed: %+v", st.OpenSessions, st)
	}
}

func TestRecordReadsTheColumnsAskedForUntyped(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(allTypesDDL, "all")))
	rows := writeAllTypes(t, srv, "all", 20)
	got, _, err := readAll(t, configFor(srv, "all"), Query{Columns: []string{"id", "li", "dec", "ts6", "j", "arr", "m", "st", "bi"}, Where: "id < 10"}, reflect.TypeOf(Record{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 {
		t.Fatalf("%d records, want 10", len(got))
	}
	for _, g := range got {
		r := g.(Record)
		id, _ := r.Get("id")
		want := rows[id.(int64)]
		li, _ := r.Get("LI")
		dec, _ := r.Get("dec")
		ts, _ := r.Get("ts6")
		j, _ := r.Get("j")
		arr, _ := r.Get("arr")
		st, _ := r.Get("st")
		if want.LI == nil && li != nil || want.LI != nil && li.(*big.Int).Cmp(want.LI) != 0 || dec != want.Dec ||
			!ts.(time.Time).Equal(want.TS6) || string(j.(json.RawMessage)) != string(want.J) {
			t.Errorf("record %v, want the values of %+v", r, want)
		}
		if fmt.Sprint(arr) != strings.ReplaceAll(fmt.Sprint(want.Arr), "[]", "<nil>") && len(want.Arr) > 0 {
			t.Errorf("arr %v, want %v", arr, want.Arr)
		}
		if want.St != nil && st.(map[string]any)["a"] != want.St.A {
			t.Errorf("st %v, want %+v", st, want.St)
		}
		if !slices.Equal(r.Columns, []string{"id", "li", "dec", "ts6", "j", "arr", "m", "st", "bi"}) {
			t.Errorf("columns %v", r.Columns)
		}
	}
}

func TestALimitReadsThatManyRowsInOneQuery(t *testing.T) {
	srv, _ := idTable(t, 500)
	got, _, err := readAll(t, configFor(srv, "ids"), Query{Limit: 7, Columns: []string{"name", "id"}}, reflect.TypeOf(idOnly{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 7 || srv.FlightStats().TabletQueries != 1 {
		t.Errorf("%d rows in %d queries, want 7 in 1", len(got), srv.FlightStats().TabletQueries)
	}
}

type zoned struct {
	ID int64     `doris:"id"`
	At time.Time `doris:"at"`
	On time.Time `doris:"on"`
}

func TestTimesReadBackInTheZoneTheyWereWrittenIn(t *testing.T) {
	srv := startServer(t, doristest.WithTable("demo.z(id BIGINT NOT NULL, at DATETIME(6), `on` DATE)"))
	tokyo := time.FixedZone("+09:00", 9*3600)
	rows := []zoned{
		{1, time.Date(2025, 12, 31, 23, 59, 59, 123456000, tokyo), time.Date(2025, 12, 31, 0, 0, 0, 0, tokyo)},
		{2, time.Date(1999, 1, 1, 0, 0, 0, 1000, tokyo), time.Date(1999, 1, 1, 0, 0, 0, 0, tokyo)},
	}
	mustWrite(t, srv, "z", rows, WithTimeZone(tokyo))
	got, _, err := readAll(t, configFor(srv, "z"), Query{}, reflect.TypeOf(zoned{}), WithReadTimeZone(tokyo))
	if err != nil {
		t.Fatal(err)
	}
	wantSameRows(t, got, rows)
	utc, _, err := readAll(t, configFor(srv, "z"), Query{Where: "id = 1"}, reflect.TypeOf(zoned{}))
	if err != nil {
		t.Fatal(err)
	}
	if at := utc[0].(zoned).At; at.Location() != time.UTC || at.Format(time.DateTime) != "2025-12-31 23:59:59" {
		t.Errorf("read without a zone: %v, want the stored wall clock in UTC", at)
	}
}

func TestReadRefusesAnInvalidQueryOrTypeAtConstruction(t *testing.T) {
	srv, _ := idTable(t, 1)
	cfg := configFor(srv, "ids")
	noTable := cfg
	noTable.Table = ""
	badPort := cfg
	badPort.FlightSQLPort = 70000
	type chanField struct {
		ID int64    `doris:"id"`
		C  chan int `doris:"name"`
	}
	for _, tt := range []struct {
		cfg  Config
		q    Query
		elem reflect.Type
		opts []ReadOption
		want string
	}{
		{noTable, Query{}, reflect.TypeOf(idOnly{}), nil, "dorisio.Read: Config.Table: empty; Read reads one table"},
		{badPort, Query{}, reflect.TypeOf(idOnly{}), nil, "Config.FlightSQLPort 70000"},
		{cfg, Query{TabletsPerSplit: -1}, reflect.TypeOf(idOnly{}), nil, "Query.TabletsPerSplit -1: must be >= 0"},
		{cfg, Query{Limit: -2}, reflect.TypeOf(idOnly{}), nil, "Query.Limit -2: must be >= 0"},
		{cfg, Query{Columns: []string{"id", "ID"}}, reflect.TypeOf(idOnly{}), nil, `Query.Columns: "ID" twice`},
		{cfg, Query{Where: "1=1; DROP TABLE ids"}, reflect.TypeOf(idOnly{}), nil, "one predicate, without ';'"},
		{cfg, Query{Where: `name = 'it\'s;' /* ; */; DROP TABLE ids`}, reflect.TypeOf(idOnly{}), nil, "one predicate, without ';'"},
		{cfg, Query{Where: "id = 1) OR (1=1"}, reflect.TypeOf(idOnly{}), nil, "a ')' closes more than the condition opened"},
		{cfg, Query{Where: "(id = 1)) OR ((name = ')')"}, reflect.TypeOf(idOnly{}), nil, "would end them early"},
		{cfg, Query{}, reflect.TypeOf(&idOnly{}), nil, "want a struct type (not a pointer to one)"},
		{cfg, Query{}, nil, nil, "nil element type"},
		{cfg, Query{}, reflect.TypeOf(chanField{}), nil, "field chanField.C: no Doris column fills a chan int"},
		{cfg, Query{}, reflect.TypeOf(idOnly{}), []ReadOption{WithEndpointRewrite("0.0.0.0", "http://be:9090")}, `WithEndpointRewrite("0.0.0.0", "http://be:9090"): the target`},
		{cfg, Query{}, reflect.TypeOf(idOnly{}), []ReadOption{WithReadAttempts(0)}, "WithReadAttempts(0): must be >= 1"},
		{cfg, Query{}, reflect.TypeOf(idOnly{}), []ReadOption{WithReadSplitsInFlight(0)}, "WithReadSplitsInFlight(0): want 1-64"},
		{cfg, Query{}, reflect.TypeOf(idOnly{}), []ReadOption{WithReadSplitsInFlight(65)}, "WithReadSplitsInFlight(65): want 1-64"},
		{cfg, Query{}, reflect.TypeOf(idOnly{}), []ReadOption{WithReadTimeZone(time.Local)}, "WithReadTimeZone(Local)"},
	} {
		func() {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(fmt.Sprint(r), tt.want) {
					t.Errorf("panic %v, want it to contain %q", r, tt.want)
				}
			}()
			p, s := beam.NewPipelineWithRoot()
			_ = p
			Read(s, tt.cfg, tt.q, tt.elem, tt.opts...)
		}()
	}
}

func TestAColumnTheTableLacksIsNamedWithTheTablesColumns(t *testing.T) {
	srv, _ := idTable(t, 1)
	_, _, err := readAll(t, configFor(srv, "ids"), Query{Columns: []string{"id", "nmae"}}, reflect.TypeOf(Record{}))
	wantErr(t, err, `dorisio.Read: table demo.ids has no column "nmae" (named by Query.Columns); its columns are id, name`)
}

func TestTheReadsPasswordNeverTravelsWithThePipeline(t *testing.T) {
	srv := startServer(t, doristest.WithAuth("reader", "S3cret-pw"), doristest.WithTable(fmt.Sprintf(idsDDL, "ids")))
	cfg := configFor(srv, "ids")
	r, err := newRead(cfg, Query{}, reflect.TypeOf(idOnly{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), "S3cret-pw") {
		t.Errorf("the serialized read holds the password: %s", b)
	}
	if _, _, err := readAll(t, cfg, Query{}, reflect.TypeOf(idOnly{})); err != nil {
		t.Fatal(err)
	}
	bad := cfg
	bad.Password = "wrong-pw"
	_, _, err = readAll(t, bad, Query{}, reflect.TypeOf(idOnly{}))
	wantErr(t, err, "dorisio.Read: table demo.ids")
	if err != nil && strings.Contains(err.Error(), "wrong-pw") {
		t.Errorf("the error shows the password: %v", err)
	}
}

func TestASplitPastTheBufferIsSpilledAndReadBackWhole(t *testing.T) {
	srv, rows := idTable(t, 20_000)
	h := srv.Inject(doristest.Fault{Kind: doristest.DoGetFails, Count: 1})
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir) // where the spill files go (os.TempDir)
	got, res, err := readAll(t, configFor(srv, "ids"), Query{TabletsPerSplit: 8}, reflect.TypeOf(idOnly{}), WithReadBufferBytes(1))
	if err != nil {
		t.Fatal(err)
	}
	wantSameRows(t, got, rows)
	if n := counter(res, "read_spilled_batches"); h.Hits() != 1 || n < 5 {
		t.Errorf("fault hits %d, %d batches spilled: want the first attempt's fetch cut, and every batch past the first spilled", h.Hits(), n)
	}
	left, _ := os.ReadDir(dir)
	for _, f := range left {
		if strings.HasPrefix(f.Name(), "dorisio-read-") {
			t.Errorf("spill file %s left behind", f.Name())
		}
	}
}

// A Where that ends in a SQL comment still limits the read: Doris reads a
// `--` comment to the line's end, and before, the statement's LIMIT was
// written after it, on the same line (every row was read).
func TestAWhereEndingInACommentKeepsTheLimit(t *testing.T) {
	srv, _ := idTable(t, 500)
	got, _, err := readAll(t, configFor(srv, "ids"), Query{Where: "id >= 0 -- every id", Limit: 7}, reflect.TypeOf(idOnly{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 7 {
		t.Errorf("%d rows, want 7", len(got))
	}
}

// A query Doris fails because a BE is down or busy is run again, as a
// fetch that failed is: the split reads every row once. One Doris refuses
// for what it says (an unknown column) fails at once, in Doris' words.
// Before, any "detailMessage" was final: a BE restarting failed the read.
func TestAQueryFailedByABackendDownIsRunAgainAndAnAnalysisErrorIsNot(t *testing.T) {
	srv, rows := idTable(t, 500)
	h := srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointFlightQuery, Count: 1,
		Body: "errCode = 2, detailMessage = There is no scanNode Backend available.[10003: not alive]"})
	got, res, err := readAll(t, configFor(srv, "ids"), Query{}, reflect.TypeOf(idOnly{}))
	if err != nil {
		t.Fatal(err)
	}
	wantSameRows(t, got, rows)
	if h.Hits() != 1 || counter(res, "read_split_reruns") != 1 {
		t.Errorf("fault hits %d, split reruns %d: want the failed query run once more", h.Hits(), counter(res, "read_split_reruns"))
	}
	srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointFlightQuery, Count: 1,
		Body: "errCode = 2, detailMessage = Unknown column 'idx' in 'table list'"})
	before := srv.FlightStats().TabletQueries
	_, _, err = readAll(t, configFor(srv, "ids"), Query{}, reflect.TypeOf(idOnly{}))
	wantErr(t, err, "dorisio.Read: table demo.ids", "Unknown column 'idx' in 'table list'")
	if n := srv.FlightStats().TabletQueries - before; n != 1 {
		t.Errorf("%d queries: Doris' refusal of the statement is not retried", n)
	}
}

// A ';' or a quote inside a string literal is the value's: only a ';'
// between statements is refused.
func TestAWhereLiteralMayHoldASemicolonOrAQuote(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(idsDDL, "ids")))
	mustWrite(t, srv, "ids", []idOnly{{1, "a;b"}, {2, "it's"}, {3, "x"}})
	got, _, err := readAll(t, configFor(srv, "ids"), Query{Where: `name = 'a;b' OR name = 'it''s' OR name = "x;" OR (name = ')(' /* ) */)`}, reflect.TypeOf(idOnly{}))
	if err != nil {
		t.Fatal(err)
	}
	wantSameRows(t, got, []idOnly{{1, "a;b"}, {2, "it's"}})
}

// A plan Doris fails because a BE is down or busy (inside _query_plan's
// success envelope, as TableQueryPlanAction answers) or a SHOW FRONTENDS
// over its time limit is asked again, as a split's query is: the read
// reads every row once. A plan Doris refuses for what it says fails at
// once, in Doris' words. Before, any planning failure was final: a BE
// restarting failed the read before its first split.
func TestAPlanFailedByABackendDownIsAskedAgainAndAnAnalysisErrorIsNot(t *testing.T) {
	srv, rows := idTable(t, 500)
	plan := srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointQueryPlan, Count: 1,
		Body: `{"msg":"success","code":0,"data":{"status":500,"exception":"errCode = 2, detailMessage = There is no scanNode Backend available.[10003: not alive]"},"count":0}`})
	fes := srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointQuery, Count: 1,
		Body: `{"msg":"Error","code":1,"data":"errCode = 2, detailMessage = query timeout, the query exceeds the time limit","count":0}`})
	got, _, err := readAll(t, configFor(srv, "ids"), Query{}, reflect.TypeOf(idOnly{}))
	if err != nil {
		t.Fatal(err)
	}
	wantSameRows(t, got, rows)
	if plan.Hits() != 1 || fes.Hits() != 1 {
		t.Errorf("fault hits: _query_plan %d, SHOW FRONTENDS %d: want each once, then asked again", plan.Hits(), fes.Hits())
	}
	refused := srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointQueryPlan,
		Body: `{"msg":"success","code":0,"data":{"status":400,"exception":"errCode = 2, detailMessage = Unknown column 'idx' in 'table list'"},"count":0}`})
	_, _, err = readAll(t, configFor(srv, "ids"), Query{}, reflect.TypeOf(idOnly{}))
	wantErr(t, err, "dorisio.Read: table demo.ids: planning the read", "Unknown column 'idx' in 'table list'")
	if refused.Hits() != 1 {
		t.Errorf("_query_plan asked %d times: Doris' refusal of the statement is not asked again", refused.Hits())
	}
}

type dated struct {
	ID int64     `doris:"id"`
	On time.Time `doris:"on"`
}

func init() { beam.RegisterType(reflect.TypeOf((*dated)(nil)).Elem()) }

// In a zone whose daylight saving time starts at midnight the day has no
// 00:00: a DATE is read as the day's first instant (01:00 in Santiago on
// 2024-09-08), and that time writes back into a DATE column as the same
// day. Before, Read gave 23:00 of the day before (Go's time.Date for the
// missing midnight), and writing it back was refused as "has a time of
// day", so a Read->Write copy failed once a year.
func TestADateReadsAndWritesBackWhereDaylightSavingStartsAtMidnight(t *testing.T) {
	for _, tc := range []struct{ zone, day string }{{"America/Santiago", "2024-09-08"}, {"America/Havana", "2024-03-10"}} {
		t.Run(tc.zone, func(t *testing.T) {
			loc, err := time.LoadLocation(tc.zone)
			if err != nil {
				t.Skip("no time zone database:", err)
			}
			srv := startServer(t, doristest.WithTable("demo.d(id BIGINT NOT NULL, `on` DATE)"), doristest.WithTable("demo.d2(id BIGINT NOT NULL, `on` DATE)"))
			mustWrite(t, srv, "d", [][]byte{[]byte("1," + tc.day + "\n2,2024-06-01\n")})
			got, _, err := readAll(t, configFor(srv, "d"), Query{}, reflect.TypeOf(dated{}), WithReadTimeZone(loc))
			if err != nil {
				t.Fatal(err)
			}
			var back []dated
			for _, r := range got {
				d := r.(dated)
				if d.On.Location().String() != tc.zone {
					t.Errorf("row %d: %v is not in %s", d.ID, d.On, tc.zone)
				}
				if before := d.On.Add(-time.Nanosecond); before.Format(time.DateOnly) == d.On.Format(time.DateOnly) {
					t.Errorf("row %d: %v is not the first instant of its day", d.ID, d.On)
				}
				back = append(back, d)
			}
			sort.Slice(back, func(i, j int) bool { return back[i].ID < back[j].ID })
			if s := back[0].On.Format(time.DateOnly); s != tc.day {
				t.Errorf("read %v, want the day %s", back[0].On, tc.day)
			}
			mustWrite(t, srv, "d2", back, WithTimeZone(loc))
			wantRows(t, srv, "d2", [][]string{{"1", tc.day}, {"2", "2024-06-01"}})
		})
	}
}

// unsignedRow's fields are each the Go type WithCreateTable makes the
// column of (uint8 SMALLINT ... uint64 LARGEINT).
type unsignedRow struct {
	ID  int64  `doris:"id"`
	U8  uint8  `doris:"u8"`
	U16 uint16 `doris:"u16"`
	U32 uint32 `doris:"u32"`
	U64 uint64 `doris:"u64"`
	U   uint   `doris:"u"`
}

// Write writes unsigned fields into the next wider signed column; Read
// fills the same struct back (it used to refuse it: "a uint32 cannot
// hold every BIGINT value"), and a stored value the field cannot hold
// fails the read naming the row, the column and the value.
func TestUnsignedFieldsReadBackWhatWriteWrote(t *testing.T) {
	srv := startServer(t, doristest.WithTable("demo.uns(id BIGINT NOT NULL, u8 SMALLINT, u16 INT, u32 BIGINT, u64 LARGEINT, u LARGEINT)"))
	rows := []unsignedRow{
		{1, math.MaxUint8, math.MaxUint16, math.MaxUint32, math.MaxUint64, math.MaxUint},
		{2, 0, 0, 0, 0, 0},
		{3, 7, 300, 70000, 1 << 40, 12},
	}
	mustWrite(t, srv, "uns", rows)
	got, _, err := readAll(t, configFor(srv, "uns"), Query{}, reflect.TypeOf(unsignedRow{}))
	if err != nil {
		t.Fatal(err)
	}
	wantSameRows(t, got, rows)

	for _, bad := range []struct{ row, want string }{
		{"4,256,0,0,0,0\n", "column u8 SMALLINT into field unsignedRow.U8: 256 is above a uint8's largest value, 255"},
		{"5,0,-1,0,0,0\n", "column u16 INT into field unsignedRow.U16: -1 is negative: a uint16 cannot hold it"},
		{"6,0,0,4294967296,0,0\n", "column u32 BIGINT into field unsignedRow.U32: 4294967296 is above a uint32's largest value, 4294967295"},
		{"7,0,0,0,18446744073709551616,0\n", "column u64 LARGEINT into field unsignedRow.U64: 18446744073709551616 is above a uint64's largest value, 18446744073709551615"},
		{"8,0,0,0,0,-3\n", "column u LARGEINT into field unsignedRow.U: -3 is negative: a uint cannot hold it"},
	} {
		mustWrite(t, srv, "uns", [][]byte{[]byte(bad.row)})
		_, _, err := readAll(t, configFor(srv, "uns"), Query{Where: "id = " + strings.Split(bad.row, ",")[0]}, reflect.TypeOf(unsignedRow{}))
		wantErr(t, err, "dorisio.Read: table demo.uns", "row 1, "+bad.want)
	}
}
