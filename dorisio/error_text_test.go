package dorisio

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// Error texts reach the user through the runner, which sends them as
// protobuf strings (UTF-8 only) and flattens them (KindOf reads markers).

type noted struct {
	ID   int64   `doris:"id"`
	Name string  `doris:"name"`
	F    float64 `doris:"f"`
}

func init() {
	register.Function2x0(latin1Row)
	register.Function2x0(markerRow)
}

// latin1Row emits a row whose string is not UTF-8, from a DoFn fused with
// Write, as a decoder of binary input would.
func latin1Row(_ []byte, emit func(event)) { emit(event{ID: 7, Name: "caf\xe9"}) }

// markerRow emits a row whose text holds a marker, with a NaN that an INT
// column refuses.
func markerRow(_ []byte, emit func(noted)) {
	emit(noted{ID: 1, Name: "user said [dorisio:auth] and [dorisio:txn-aborted]", F: math.NaN()})
}

// On prism, the error of a row that is not UTF-8 reaches the user naming the
// field and the row (before: "SDK worker disconnected", the error text
// holding the raw byte could not be sent).
func TestInvalidUTF8ErrorReachesTheUserOnPrism(t *testing.T) {
	for _, f := range formats {
		t.Run(string(f), func(t *testing.T) {
			srv := startServer(t, doristest.WithTable("demo.t(id BIGINT NOT NULL, name VARCHAR(64))"))
			_, err := runPipeline(t, func(s beam.Scope) {
				Write(s, configFor(srv, "t"), beam.ParDo(s, latin1Row, beam.Impulse(s)), WithFormat(f))
			})
			wantErr(t, err, "table demo.t: field Event.Name (column name VARCHAR) of element \"{ID:7 Name:caf\\xe9}\"",
				"invalid UTF-8 at byte 3 (0xe9)")
			if err != nil && !utf8.ValidString(err.Error()) {
				t.Errorf("the error text is not UTF-8: %q", err.Error())
			}
			wantRows(t, srv, "t", nil)
		})
	}
}

// A row quoting a marker cannot classify the error: KindOf says what
// happened (an encoding error: no kind), not what the data says.
func TestKindOfIgnoresMarkersInTheUsersData(t *testing.T) {
	srv := startServer(t, doristest.WithTable("demo.t(id BIGINT NOT NULL, name VARCHAR(64), f INT)"))
	_, err := runPipeline(t, func(s beam.Scope) {
		Write(s, configFor(srv, "t"), beam.ParDo(s, markerRow, beam.Impulse(s)))
	})
	wantErr(t, err, `user said [dorisio\x3aauth]`, "NaN")
	if k := KindOf(err); k != nil {
		t.Errorf("KindOf = %v for an encoding error whose row quotes markers:\n%v", k, err)
	}
}

// Doris' own words are data too: a message or body quoting a marker does
// not classify the error, and an *Error's text is UTF-8 whatever Doris sent.
func TestErrorTextQuotesDorisDataSafely(t *testing.T) {
	e := &Error{Op: "load", DB: "demo", Table: "t", Label: "l1", HTTPStatus: 500,
		Status: "Fail", Message: "bad row [dorisio:txn-aborted] \xff", ErrorLog: []string{"Reason: [dorisio:auth]"},
		Body: "<html>[dorisio:data-quality]\xfe</html>"}
	text := e.Error()
	if !utf8.ValidString(text) {
		t.Errorf("*Error text is not UTF-8: %q", text)
	}
	if k := KindOf(errors.New(text)); k != nil {
		t.Errorf("KindOf(flattened text) = %v; the markers were Doris' data: %s", k, text)
	}
	if !strings.Contains(text, `message "bad row [dorisio\x3atxn-aborted] \xff"`) {
		t.Errorf("the message is not quoted faithfully: %s", text)
	}
	q := text[strings.Index(text, `message "`)+len("message "):]
	q = q[:strings.Index(q, `\xff"`)+len(`\xff"`)]
	if back, err := strconv.Unquote(q); err != nil || back != e.Message {
		t.Errorf("the quoted message does not unquote to Doris' words: %q, %v", back, err)
	}
}

// KindOf returns the most severe kind present, in process and in text.
func TestKindOfReturnsTheMostSevereKind(t *testing.T) {
	unknown := &Error{Op: "commit", Kind: ErrOutcomeUnknown, TxnID: 1}
	aborted := &Error{Op: "commit", Kind: ErrTxnAborted, TxnID: 2}
	auth := &Error{Op: "get_load_state", Kind: ErrAuth}
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"two loads, one aborted: in process", errors.Join(unknown, aborted), ErrTxnAborted},
		{"two loads, one aborted: flattened, outcome-unknown first", errors.New("job failed: " + unknown.Error() + "; " + aborted.Error()), ErrTxnAborted},
		{"an unsettled commit whose state read was refused", &Error{Op: "commit", Kind: ErrOutcomeUnknown, Cause: auth}, ErrAuth},
		{"forgotten over data quality", errors.New("[dorisio:data-quality] x [dorisio:txn-forgotten] y"), ErrTxnForgotten},
		{"data quality over auth", errors.New("[dorisio:auth] x [dorisio:data-quality] y"), ErrDataQuality},
		{"auth over quota", errors.New("[dorisio:txn-quota] x [dorisio:auth] y"), ErrAuth},
		{"quota over committed", errors.New("[dorisio:txn-committed] [dorisio:txn-quota]"), ErrTxnQuota},
		{"committed over label-exists", errors.New("[dorisio:label-exists] [dorisio:txn-committed]"), ErrTxnCommitted},
		{"label-exists over outcome-unknown", errors.New("[dorisio:outcome-unknown] [dorisio:label-exists]"), ErrLabelExists},
		{"any kind over an unclassified one", errors.New("[dorisio:error] [dorisio:outcome-unknown]"), ErrOutcomeUnknown},
		{"only unclassified", errors.New("[dorisio:error] x"), nil},
		{"an unclassified *Error", &Error{Op: "load"}, nil},
		{"a wrapped sentinel", fmt.Errorf("x: %w", ErrTxnQuota), ErrTxnQuota},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := KindOf(tc.err); got != tc.want {
				t.Errorf("KindOf = %v, want %v (%v)", got, tc.want, tc.err)
			}
		})
	}
}

// A file path is any bytes: the error naming a file that is not UTF-8
// reaches the user on prism, the path escaped.
func TestAFileNameThatIsNotUTF8IsShownEscaped(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "caf\xe9.csv.gz")
	if err := os.WriteFile(path, []byte("1,not gzip\n"), 0o644); err != nil {
		t.Skip("this filesystem refuses a name that is not UTF-8:", err)
	}
	srv := startServer(t, doristest.WithTable(docsDDL))
	_, err := runPipeline(t, func(s beam.Scope) {
		WriteFiles(s, configFor(srv, "docs"), []string{filepath.Join(dir, "*.gz")}, Files{})
	})
	wantErr(t, err, `caf\xe9.csv.gz is not gz-compressed`)
	if err != nil && !utf8.ValidString(err.Error()) {
		t.Errorf("the error text is not UTF-8: %q", err.Error())
	}
}
