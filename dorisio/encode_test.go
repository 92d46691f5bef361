package dorisio

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// A Write of elements it cannot encode stops at construction, naming the
// user's type and field and what to do. (A type Beam cannot carry, a
// channel field, never reaches the Write: encode's tests check it.)
func TestUnencodableTypesFailAtConstruction(t *testing.T) {
	type withMap struct{ M map[string]int }
	type twoNames struct {
		A int `doris:"x"`
		B int `doris:"X"`
	}
	tests := []struct {
		name   string
		elem   any
		format Format
		want   string
	}{
		{"a map element", map[string]int{}, CSV, "cannot encode element type map[string]int"},
		{"a map field in CSV", withMap{}, CSV, "field dorisio.withMap.M: type map[string]int is an ARRAY/MAP/STRUCT/JSON value: load it with WithFormat(dorisio.JSON)"},
		{"a struct without exported fields", struct{ a int }{}, CSV, "has no exported fields"},
		{"two fields naming one column", twoNames{}, CSV, `fields twoNames.A and twoNames.B both name column "X"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if msg := constructionPanic(validConfig(), tc.elem, WithFormat(tc.format)); !strings.Contains(msg, tc.want) {
				t.Errorf("construction: %q\nwant it to contain %q", msg, tc.want)
			}
		})
	}
}

func TestParseDecimal(t *testing.T) {
	for in, want := range map[string]string{
		"1234567.89": "1234567.89", "-0.00001": "-0.00001", "1.23456789e+06": "1234567.89", "1e-05": "0.00001",
		"+5": "5", ".5": "0.5", "5.": "5", "12E2": "1200", "-1.5e-3": "-0.0015",
	} {
		got, err := ParseDecimal(in)
		if err != nil || string(got) != want {
			t.Errorf("ParseDecimal(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-", "1.2.3", "1e", "abc", "1,5", "NaN", "1e99999"} {
		if _, err := ParseDecimal(bad); err == nil {
			t.Errorf("ParseDecimal(%q) succeeded", bad)
		}
	}
}

// sharedChunks emits two chunks of rows that share one backing array, as a
// reader that cuts a buffer into pieces does: the first ends without its
// line delimiter, right where the second begins.
func sharedChunks(_ []byte, emit func([]byte)) {
	buf := []byte("1,a2,b")
	emit(buf[0:3:6]) // capacity reaches into the second chunk
	emit(buf[3:6])
}

func init() { register.Function2x0(sharedChunks) }

// The encoder adds a missing final delimiter in its own buffer, never in
// the user's: appending to the element would overwrite whatever follows it
// in its backing array (here, the next chunk's first byte, which the user's
// DoFn emitted already).
func TestAddingTheFinalDelimiterNeverWritesIntoTheUsersSlice(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	_, err := runPipeline(t, func(s beam.Scope) {
		Write(s, configFor(srv, "events"), beam.ParDo(s, sharedChunks, beam.Impulse(s)))
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", [][]string{{"1", "a"}, {"2", "b"}})
}

type fromDatabaseSQL struct {
	ID   int64          `doris:"id"`
	Note sql.NullString `doris:"note"`
}

type fromDatabaseSQLInt struct {
	ID int64             `doris:"id"`
	N  sql.Null[float64] `doris:"n"`
}

// A database/sql nullable field (sql.NullString, sql.Null[T]) stops the
// Write's construction, naming the pointer type that loads NULL: before, a
// STRING or JSON column took {"String":"x","Valid":true} for "x", and
// {"String":"","Valid":false} for NULL, without a word.
func TestADatabaseSQLNullFieldFailsAtConstructionNamingThePointer(t *testing.T) {
	for _, tc := range []struct {
		elem any
		want string
	}{
		{fromDatabaseSQL{}, "field dorisio.fromDatabaseSQL.Note: type sql.NullString is a database/sql driver.Valuer"},
		{fromDatabaseSQLInt{}, "field dorisio.fromDatabaseSQLInt.N: type sql.Null[float64] is a database/sql driver.Valuer"},
	} {
		msg := constructionPanic(validConfig(), tc.elem, WithFormat(JSON))
		if !strings.Contains(msg, tc.want) || !strings.Contains(msg, "a pointer (*string, *int64, ...; nil loads NULL)") {
			t.Errorf("construction: %q\nwant it to contain %q and name the pointer", msg, tc.want)
		}
	}
}
