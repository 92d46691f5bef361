package doristest

import (
	"bytes"
	"compress/gzip"
	"os"
	"regexp"
	"testing"
)

// The server plays the Doris that the repository's compose file starts by
// default, so that tests here and e2e runs against it expect the same.
func TestDefaultVersionIsTheComposeFilesDefault(t *testing.T) {
	b, err := os.ReadFile("../../integration/doris/docker-compose.yml")
	if err != nil {
		t.Skip("no compose file:", err)
	}
	m := regexp.MustCompile(`DORIS_VERSION:-([0-9.]+)`).FindAllSubmatch(b, -1)
	if len(m) == 0 {
		t.Fatal("docker-compose.yml names no ${DORIS_VERSION:-x.y.z} default")
	}
	for _, v := range m {
		if string(v[1]) != DefaultDorisVersion {
			t.Errorf("docker-compose.yml defaults to Doris %s, DefaultDorisVersion is %s: change table.DefaultVersion with the compose file", v[1], DefaultDorisVersion)
		}
	}
}

// A JSON load with compress_type is refused before Doris 3.0.5, in the
// header phase with the BE's words (StreamLoadAction::_on_header), and
// loaded from 3.0.5 on (apache/doris#48990, #49044). Before,
// it was loaded on every version.
func TestCompressedJSONIsRefusedBeforeDoris305(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"id": 1, "name": "a"}` + "\n"))
	zw.Close()
	for _, tc := range []struct {
		version string
		refused bool
	}{{DefaultDorisVersion, true}, {"2.1.11", true}, {"3.0.4", true}, {"3.0.5", false}, {"3.1.0", false}, {"4.0.1", false}, {"master", false}} {
		t.Run(tc.version, func(t *testing.T) {
			s := newServer(t, WithTable(demoDDL), WithDorisVersion(tc.version))
			body := beLoad(t, s, "demo", "t", hdr{"label": "j", "format": "Json", "read_json_by_line": "true", "compress_type": "gz"}, gz.String())
			if tc.refused {
				wantEqual(t, "Status", field(t, body, "Status"), "Fail")
				wantEqual(t, "Message", field(t, body, "Message"), "[INTERNAL_ERROR]compress data of JSON format is not supported.")
				wantEqual(t, "txns", len(s.Txns("demo")), 0)
				return
			}
			wantEqual(t, "Status", field(t, body, "Status"), "Success")
			wantEqual(t, "rows", s.Rows("demo", "t"), [][]string{{"1", "a"}})
		})
	}
}

// Messages follow the version played (protocol §4): 2.0 before 2.0.3
// quotes the FE's text without "TStatus: "; the label's txn state after
// "relate to txn [N]" came with 2.1.6 and 3.0.2; 2.0 reports too many
// filtered rows as INTERNAL_ERROR. Before, every version answered in
// 2.1.11's words.
func TestMessagesAreInTheWordsOfTheVersionPlayed(t *testing.T) {
	for _, tc := range []struct {
		version, exists, quality, aborted string
	}{
		{"2.0.2", "[LABEL_ALREADY_EXISTS]errCode = 2, detailMessage = Label [l] has already been used, relate to txn [1001]",
			"[INTERNAL_ERROR]too many filtered rows", "errCode = 2, detailMessage = transaction [1003] is already aborted, abort reason: User Abort"},
		{"2.0.3", "[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label [l] has already been used, relate to txn [1001]",
			"[INTERNAL_ERROR]too many filtered rows", "TStatus: errCode = 2, detailMessage = transaction [1003] is already aborted, abort reason: User Abort"},
		{"2.1.5", "[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label [l] has already been used, relate to txn [1001]",
			"[DATA_QUALITY_ERROR]too many filtered rows", "TStatus: errCode = 2, detailMessage = transaction [1003] is already aborted, abort reason: User Abort"},
		{"2.1.6", "[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label [l] has already been used, relate to txn [1001], status [VISIBLE].",
			"[DATA_QUALITY_ERROR]too many filtered rows", "TStatus: errCode = 2, detailMessage = transaction [1003] is already aborted, abort reason: User Abort"},
		{"3.0.1", "[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label [l] has already been used, relate to txn [1001]",
			"[DATA_QUALITY_ERROR]too many filtered rows", "TStatus: errCode = 2, detailMessage = transaction [1003] is already aborted, abort reason: User Abort"},
		{"master", "[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label [l] has already been used, relate to txn [1001], status [VISIBLE].",
			"[DATA_QUALITY_ERROR]too many filtered rows", "TStatus: errCode = 2, detailMessage = transaction [1003] is already aborted, abort reason: User Abort"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			s := newServer(t, WithTable(demoDDL), WithDorisVersion(tc.version))
			streamLoad(t, s, "demo", "t", hdr{"label": "l"}, "1\ta\n")
			body := streamLoad(t, s, "demo", "t", hdr{"label": "l"}, "1\ta\n")
			wantEqual(t, "Message", field(t, body, "Message"), tc.exists)
			body = streamLoad(t, s, "demo", "t", hdr{"label": "q", "strict_mode": "true"}, "x\ta\n")
			wantEqual(t, "Message", field(t, body, "Message"), tc.quality)
			body = streamLoad(t, s, "demo", "t", hdr{"label": "a", "two_phase_commit": "true"}, "2\tb\n")
			id := txnID(t, body)
			wantEqual(t, "abort", field(t, twoPC(t, s, "demo", hdr{"txn_id": id, "txn_operation": "abort"}), "status"), "Success")
			wantEqual(t, "msg", field(t, twoPC(t, s, "demo", hdr{"txn_id": id, "txn_operation": "abort"}), "msg"), tc.aborted)
		})
	}
}

// A DATETIME(n) value with more than n fraction digits is rounded half up
// from Doris 2.1 on, carrying into the seconds and on into the next day
// (DateV2Value::from_date_str_base with the column's scale, which 2.1's
// CSV and JSON readers pass; apache/doris#31205 rounds a 7th digit into
// DATETIME(6)); 2.0's readers pass no scale and the digits are cut.
// Before, every version cut them.
func TestDateTimeFractionDigitsAreRoundedFromDoris21(t *testing.T) {
	const ddl = "CREATE TABLE demo.dt (id INT, t3 DATETIME(3), t0 DATETIME, t6 DATETIME(6)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"
	const body = "1\t2024-12-31 23:59:59.9996\t2024-12-31 23:59:59.5\t2024-01-01 00:00:00.1234565\n" +
		"2\t2024-01-01 00:00:00.1234\t2024-01-01 00:00:00.4999\t2024-01-01 00:00:00.1234564\n"
	for _, tc := range []struct {
		version string
		want    [][]string
	}{
		{"2.0.15", [][]string{
			{"1", "2024-12-31 23:59:59.999", "2024-12-31 23:59:59", "2024-01-01 00:00:00.123456"},
			{"2", "2024-01-01 00:00:00.123", "2024-01-01 00:00:00", "2024-01-01 00:00:00.123456"}}},
		{DefaultDorisVersion, [][]string{
			{"1", "2025-01-01 00:00:00.000", "2025-01-01 00:00:00", "2024-01-01 00:00:00.123457"},
			{"2", "2024-01-01 00:00:00.123", "2024-01-01 00:00:00", "2024-01-01 00:00:00.123456"}}},
		{"master", [][]string{
			{"1", "2025-01-01 00:00:00.000", "2025-01-01 00:00:00", "2024-01-01 00:00:00.123457"},
			{"2", "2024-01-01 00:00:00.123", "2024-01-01 00:00:00", "2024-01-01 00:00:00.123456"}}},
	} {
		t.Run(tc.version, func(t *testing.T) {
			s := newServer(t, WithTable(ddl), WithDorisVersion(tc.version))
			body := beLoad(t, s, "demo", "dt", hdr{"label": "f"}, body)
			wantEqual(t, "Status", field(t, body, "Status"), "Success")
			wantEqual(t, "rows", s.Rows("demo", "dt"), tc.want)
		})
	}
}
