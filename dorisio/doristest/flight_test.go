package doristest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// flightTable is a table of 4 tablets holding ids 0..n-1.
func flightTable(t *testing.T, n int, opts ...Option) *Server {
	t.Helper()
	s := newServer(t, append([]Option{WithTable("demo.t(id BIGINT NOT NULL, name VARCHAR(16), at DATETIME(3)) DISTRIBUTED BY HASH(id) BUCKETS 4")}, opts...)...)
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%d,n%d,2025-01-02 03:04:05.%03d\n", i, i, i%1000)
	}
	streamLoad(t, s, "demo", "t", hdr{"column_separator": ","}, b.String())
	return s
}

// flightClient is an arrow-go Flight SQL client with a session on s.
type flightClient struct {
	c   *flightsql.Client
	ctx context.Context // carries the bearer token
}

func newFlightClient(t *testing.T, s *Server) *flightClient {
	t.Helper()
	c, err := flightsql.NewClient(s.FlightAddr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, err := c.Client.AuthenticateBasicToken(context.Background(), s.User, s.Password)
	if err != nil {
		t.Fatalf("handshake: %v", err)
	}
	return &flightClient{c: c, ctx: ctx}
}

// fetch DoGets an endpoint at its location and returns the ids it holds.
func fetchIDs(t *testing.T, ep *flight.FlightEndpoint) ([]int64, error) {
	t.Helper()
	u, err := url.Parse(ep.Location[0].Uri)
	if err != nil {
		t.Fatal(err)
	}
	c, err := flight.NewClientWithMiddleware(u.Host, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	stream, err := c.DoGet(context.Background(), ep.Ticket)
	if err != nil {
		return nil, err
	}
	r, err := flight.NewRecordReader(stream)
	if err != nil {
		return nil, err
	}
	defer r.Release()
	var ids []int64
	for r.Next() {
		rec := r.RecordBatch()
		col := rec.Column(0).(*array.Int64)
		for i := 0; i < col.Len(); i++ {
			ids = append(ids, col.Value(i))
		}
	}
	return ids, r.Err()
}

func (fc *flightClient) query(t *testing.T, sql string) []int64 {
	t.Helper()
	info, err := fc.c.Execute(fc.ctx, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	ids, err := fetchIDs(t, info.Endpoint[0])
	if err != nil {
		t.Fatalf("%s: DoGet: %v", sql, err)
	}
	return ids
}

func TestTheTabletsOfATablePartitionItsRows(t *testing.T) {
	s := flightTable(t, 1000)
	fc := newFlightClient(t, s)
	var all []int64
	for tablet := 10001; tablet <= 10004; tablet++ {
		ids := fc.query(t, fmt.Sprintf("SELECT `id` FROM `demo`.`t` TABLET(%d)", tablet))
		if len(ids) == 0 || len(ids) == 1000 {
			t.Errorf("tablet %d holds %d of 1000 rows: the buckets do not spread them", tablet, len(ids))
		}
		all = append(all, ids...)
	}
	slices.Sort(all)
	if len(all) != 1000 || all[0] != 0 || all[999] != 999 || len(slices.Compact(all)) != 1000 {
		t.Errorf("the 4 tablets hold %d rows together, want each of 1000 once", len(all))
	}
	if st := s.FlightStats(); st.Sessions != 1 || st.TabletQueries != 4 || st.Fetches != 4 || st.MaxQueriesPerSession != 1 {
		t.Errorf("stats %+v: want 1 session, 4 tablet queries and fetches, at most 1 query in flight", st)
	}
}

func TestWhereModuloAndLimitSelectRows(t *testing.T) {
	s := flightTable(t, 100)
	fc := newFlightClient(t, s)
	even := fc.query(t, "/* ApplicationName=x */ SELECT /*+ SET_VAR(enable_short_circuit_query=false) */ id FROM demo.t WHERE id % 2 = 0 AND id < 50")
	if len(even) != 25 {
		t.Errorf("WHERE id %% 2 = 0 AND id < 50: %d rows, want 25", len(even))
	}
	for _, id := range even {
		if id%2 != 0 {
			t.Errorf("odd id %d selected", id)
		}
	}
	if got := fc.query(t, "SELECT id FROM demo.t LIMIT 7"); len(got) != 7 {
		t.Errorf("LIMIT 7: %d rows", len(got))
	}
}

// Words of the SELECT's own clauses inside a WHERE literal are the
// literal's: no TABLET clause, no LIMIT.
func TestClauseWordsInAWhereLiteralAreText(t *testing.T) {
	s := flightTable(t, 10)
	fc := newFlightClient(t, s)
	for _, where := range []string{"name = 'TABLET(1)' OR id = 3", "id = 3 OR name = 'x LIMIT 1'"} {
		if got := fc.query(t, "SELECT id FROM demo.t WHERE "+where); fmt.Sprint(got) != "[3]" {
			t.Errorf("WHERE %s: ids %v, want [3]", where, got)
		}
	}
}

func TestTheHandshakeTakesPaddedAndUnpaddedBasicAndRefusesABadPassword(t *testing.T) {
	s := newServer(t, WithAuth("reader", "pw1"))
	conn, err := grpc.NewClient(s.FlightAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := flight.NewClientFromConn(conn, nil)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
		basic := "Basic " + enc.EncodeToString([]byte("reader:pw1")) // "cmVhZGVyOnB3MQ==" padded
		stream, err := c.Handshake(metadata.AppendToOutgoingContext(context.Background(), "authorization", basic))
		if err == nil {
			_ = stream.CloseSend()
			_, err = stream.Recv()
			if tok := strings.Join(stream.Trailer().Get("authorization"), ""); !strings.HasPrefix(tok, "Bearer ") {
				t.Errorf("%s: trailer authorization %q, want a bearer token", basic, tok)
			}
		}
		if err != nil && err.Error() != "EOF" {
			t.Errorf("%s: %v", basic, err)
		}
	}
	_, err = c.AuthenticateBasicToken(context.Background(), "reader", "wrong")
	if status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "Access denied for user 'reader'") {
		t.Errorf("bad password: %v, want UNAUTHENTICATED Access denied", err)
	}
}

func TestANewQueryDropsTheSessionsUnreadResult(t *testing.T) {
	s := flightTable(t, 10)
	fc := newFlightClient(t, s)
	first, err := fc.c.Execute(fc.ctx, "SELECT id FROM demo.t")
	if err != nil {
		t.Fatal(err)
	}
	if got := fc.query(t, "SELECT id FROM demo.t WHERE id < 3"); len(got) != 3 {
		t.Fatalf("second query: %d rows", len(got))
	}
	if _, err := fetchIDs(t, first.Endpoint[0]); err == nil || !strings.Contains(err.Error(), "no arrow flight result") {
		t.Errorf("DoGet of the first query after the second: %v, want its result gone", err)
	}
	if st := s.FlightStats(); st.DroppedResults != 1 || st.MaxQueriesPerSession != 2 {
		t.Errorf("stats %+v: want 1 dropped result and 2 queries in flight at once", st)
	}
}

func TestFlightFaults(t *testing.T) {
	t.Run("DoGetFails sends a batch, fails, and leaves nothing to fetch again", func(t *testing.T) {
		s := flightTable(t, 5000)
		h := s.Inject(Fault{Kind: DoGetFails, Count: 1})
		fc := newFlightClient(t, s)
		info, err := fc.c.Execute(fc.ctx, "SELECT id FROM demo.t")
		if err != nil {
			t.Fatal(err)
		}
		ids, err := fetchIDs(t, info.Endpoint[0])
		if err == nil || len(ids) != batchRows || h.Hits() != 1 {
			t.Fatalf("DoGet: %d rows, err %v, %d hits: want %d rows then an error", len(ids), err, h.Hits(), batchRows)
		}
		if _, err := fetchIDs(t, info.Endpoint[0]); err == nil {
			t.Error("the failed result was fetched again")
		}
		if got := fc.query(t, "SELECT id FROM demo.t"); len(got) != 5000 {
			t.Errorf("the query run again: %d rows, want 5000", len(got))
		}
	})
	t.Run("TokenEvicted spares a session's first query and evicts it at its next", func(t *testing.T) {
		s := flightTable(t, 10)
		h := s.Inject(Fault{Kind: TokenEvicted, Count: 1})
		fc := newFlightClient(t, s)
		fc.query(t, "SELECT id FROM demo.t")
		_, err := fc.c.Execute(fc.ctx, "SELECT id FROM demo.t")
		if status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "invalid bearer token: ") || h.Hits() != 1 {
			t.Errorf("second query: %v (hits %d), want UNAUTHENTICATED invalid bearer token", err, h.Hits())
		}
		if st := s.FlightStats(); st.OpenSessions != 0 {
			t.Errorf("%d sessions open after the eviction", st.OpenSessions)
		}
	})
	t.Run("UnspecifiedEndpoint announces 0.0.0.0 and the BE's port", func(t *testing.T) {
		s := flightTable(t, 10)
		s.Inject(Fault{Kind: UnspecifiedEndpoint})
		fc := newFlightClient(t, s)
		info, err := fc.c.Execute(fc.ctx, "SELECT id FROM demo.t")
		if err != nil {
			t.Fatal(err)
		}
		_, port, _ := strings.Cut(s.BackendFlightAddrs()[0], ":")
		if got := info.Endpoint[0].Location[0].Uri; got != "grpc+tcp://0.0.0.0:"+port {
			t.Errorf("location %s, want grpc+tcp://0.0.0.0:%s", got, port)
		}
	})
	t.Run("NoEndpoint fails the query in Doris 4.0.x's words", func(t *testing.T) {
		s := flightTable(t, 10)
		s.Inject(Fault{Kind: NoEndpoint})
		fc := newFlightClient(t, s)
		_, err := fc.c.Execute(fc.ctx, "SELECT id FROM demo.t WHERE id = 1")
		if !strings.Contains(err.Error(), "fetch arrow flight schema failed, no FlightSqlEndpointsLocations") {
			t.Errorf("err %v", err)
		}
	})
}

func TestAStatementDoristestCannotRunIsRefusedInDorisShape(t *testing.T) {
	s := flightTable(t, 1)
	fc := newFlightClient(t, s)
	for sql, want := range map[string]string{
		"SELECT nope FROM demo.t":                    "Unknown column 'nope'",
		"SELECT id FROM demo.missing":                "Unknown table 'missing'",
		"SELECT id FROM demo.t TABLET(1)":            "Invalid tablet id: '1'",
		"SELECT id FROM demo.t TABLET()":             "Invalid tablet id: ''",
		"SELECT id FROM demo.t WHERE abs(id) > 1":    "doristest does not support the WHERE condition",
		"SELECT count(*) FROM demo.t GROUP BY id":    "doristest supports only SELECT",
		"UPDATE demo.t SET id = 1":                   "doristest supports only SELECT",
		"SELECT id FROM demo.t WHERE name % 2 = 0":   "% takes an integer column",
		"SELECT id FROM demo.t WHERE id % 0 = 0":     "% takes an integer column and a whole number > 0",
		"SELECT id FROM demo.t WHERE at > 'banana'":  "is not a DATETIME(3)",
		"SELECT id FROM demo.t WHERE id = 1 LIMIT x": "",
	} {
		_, err := fc.c.Execute(fc.ctx, sql)
		if err == nil || !strings.Contains(err.Error(), "get flight info statement failed") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v\nwant an INTERNAL get flight info statement failed holding %q", sql, err, want)
		}
	}
}

func TestQueryPlanListsEveryTabletWithItsBE(t *testing.T) {
	s := flightTable(t, 10, WithBackends(2))
	r := do(t, s, "POST", s.URL+"/api/demo/t/_query_plan", nil, `{"sql":"SELECT id FROM demo.t WHERE id > 1"}`)
	var env struct {
		Code int `json:"code"`
		Data struct {
			Status     int `json:"status"`
			Partitions map[string]struct {
				Routings []string `json:"routings"`
			} `json:"partitions"`
			Plan string `json:"opaqued_query_plan"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(r.body), &env); err != nil || env.Code != 0 || env.Data.Status != 200 || env.Data.Plan == "" {
		t.Fatalf("answer %s (%v)", r.body, err)
	}
	bes := map[string]int{}
	for id, p := range env.Data.Partitions {
		if n, _ := strconv.Atoi(id); n < 10001 || n > 10004 || len(p.Routings) != 1 {
			t.Errorf("tablet %s: routings %v", id, p.Routings)
		}
		bes[p.Routings[0]]++
	}
	if len(env.Data.Partitions) != 4 || len(bes) != 2 {
		t.Errorf("%d tablets on %d BEs, want 4 on 2", len(env.Data.Partitions), len(bes))
	}
	for body, want := range map[string]string{
		``:                                  `"code":403,"data":"POST body must contains [sql] root object"`,
		`{"sql":"SELECT id FROM demo.u"}`:   `Unknown table 'u'`,
		`{"sql":"SELECT id FROM demo.t x"}`: `"exception":"doristest supports only SELECT`,
	} {
		if got := do(t, s, "POST", s.URL+"/api/demo/t/_query_plan", nil, body).body; !strings.Contains(got, want) {
			t.Errorf("body %q: answer %s, want %s", body, got, want)
		}
	}
}

func TestShowFrontendsNamesTheFlightPort(t *testing.T) {
	s := newServer(t)
	r := do(t, s, "POST", s.URL+"/api/query/default_cluster/demo", hdr{"X-Doris-Stream": "false"}, `{"stmt":"SHOW FRONTENDS"}`)
	var env struct {
		Data struct {
			Meta []struct{ Name string } `json:"meta"`
			Data [][]string              `json:"data"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(r.body), &env); err != nil || len(env.Data.Data) != 1 {
		t.Fatalf("answer %s (%v)", r.body, err)
	}
	for i, m := range env.Data.Meta {
		if m.Name == "ArrowFlightSqlPort" && env.Data.Data[0][i] != strconv.Itoa(s.FlightPort()) {
			t.Errorf("ArrowFlightSqlPort %s, want %d", env.Data.Data[0][i], s.FlightPort())
		}
	}
	admin := newServer(t, WithoutAdmin())
	if got := do(t, admin, "POST", admin.URL+"/api/query/default_cluster/demo", nil, `{"stmt":"SHOW FRONTENDS"}`).body; !strings.Contains(got, "(Admin_priv,Node_priv)") {
		t.Errorf("without ADMIN: %s", got)
	}
}

func TestEveryColumnTypeHasItsArrowType(t *testing.T) {
	s := newServer(t, WithTable("demo.a(ti TINYINT, si SMALLINT, i INT, bi BIGINT, li LARGEINT, b BOOLEAN, f FLOAT, d DOUBLE, dec DECIMAL(12,2), c CHAR(4), v VARCHAR(8), s STRING, dt DATE, ts DATETIME, ts3 DATETIME(3), ts6 DATETIME(6), j JSON, arr ARRAY<INT>, m MAP<STRING,DOUBLE>, st STRUCT<x:INT,y:STRING>)"))
	streamLoad(t, s, "demo", "a", hdr{"format": "json"}, `{"ti":-1,"si":2,"i":3,"bi":4,"li":"-170141183460469231731687303715884105728","b":true,"f":1.5,"d":0.1,"dec":"-0.05","c":"ab","v":"x","s":"y","dt":"2025-01-02","ts":"2025-01-02 03:04:05","ts3":"2025-01-02 03:04:05.123","ts6":"2025-01-02 03:04:05.123456","j":{"k":[1]},"arr":[1,null],"m":{"a":0.5},"st":{"x":1,"y":"z"}}`)
	fc := newFlightClient(t, s)
	info, err := fc.c.Execute(fc.ctx, "SELECT * FROM demo.a")
	if err != nil {
		t.Fatal(err)
	}
	schema, err := flight.DeserializeSchema(info.Schema, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "ti:int8 si:int16 i:int32 bi:int64 li:utf8 b:bool f:float32 d:float64 dec:decimal(12, 2) c:utf8 v:utf8 s:utf8 dt:date32 " +
		"ts:timestamp[s, tz=+08:00] ts3:timestamp[ms, tz=+08:00] ts6:timestamp[us, tz=+08:00] j:utf8 arr:list<item: int32, nullable> " +
		"m:map<utf8, float64, items_nullable> st:struct<x: int32 nullable, y: utf8 nullable>"
	var got []string
	for _, f := range schema.Fields() {
		got = append(got, f.Name+":"+f.Type.String())
	}
	if g := strings.Join(got, " "); g != want {
		t.Errorf("schema\n got %s\nwant %s", g, want)
	}
	u, _ := url.Parse(info.Endpoint[0].Location[0].Uri)
	c, _ := flight.NewClientWithMiddleware(u.Host, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	defer c.Close()
	stream, err := c.DoGet(context.Background(), info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	r, err := flight.NewRecordReader(stream)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	if !r.Next() {
		t.Fatal(r.Err())
	}
	rec := r.RecordBatch()
	row, _ := json.Marshal(array.RecordToStructArray(rec).GetOneForMarshal(0))
	ts := rec.Column(13).(*array.Timestamp).Value(0).ToTime(arrow.Second).UTC()
	if ts.Format("15:04:05") != "19:04:05" {
		t.Errorf("DATETIME 03:04:05 in the session's +08:00 is the instant %s, want 19:04:05 UTC the day before", ts)
	}
	for _, part := range []string{`"li":"-170141183460469231731687303715884105728"`, `"dec":"-0.05"`, `"j":"{\"k\":[1]}"`, `"arr":[1,null]`, `"st":{"x":1,"y":"z"}`} {
		if !strings.Contains(string(row), part) {
			t.Errorf("row %s lacks %s", row, part)
		}
	}
}

// A back-quoted column name may hold a comma (Doris' column names may):
// the select list is split at the commas outside quotes. Before, "`a,b`"
// was read as the columns "`a" and "b`", and the plan failed naming
// column 'a'.
func TestASelectListSplitsOnlyAtCommasOutsideQuotes(t *testing.T) {
	s := newServer(t, WithTable("demo.q(id BIGINT, `a,b` INT)"))
	r := do(t, s, "POST", s.URL+"/api/demo/q/_query_plan", nil, "{\"sql\":\"SELECT id, `a,b` FROM demo.q\"}")
	if !strings.Contains(r.body, `"status":200`) {
		t.Errorf("answer %s, want a plan", r.body)
	}
	for _, n := range []struct{ list, want string }{
		{"id, `a,b` , `x``y`", "id|a,b|x`y"},
		{"`a`", "a"},
	} {
		if got := strings.Join(selectedNames(n.list), "|"); got != n.want {
			t.Errorf("selectedNames(%q) = %q, want %q", n.list, got, n.want)
		}
	}
}
