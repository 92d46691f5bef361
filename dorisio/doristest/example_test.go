package doristest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// A stream load through the FE (Go's client follows the 307 to the BE).
func Example() {
	srv := doristest.NewServer(doristest.WithTable("demo.t(id BIGINT, name VARCHAR(32))"))
	defer srv.Close()

	streamLoad(srv, "demo", "t", "1\talice\n2\tbob\n", "label", "first_load")

	fmt.Println(srv.Rows("demo", "t"))
	fmt.Println(srv.Txns("demo")[0].State)
	// Output:
	// [[1 alice] [2 bob]]
	// VISIBLE
}

// A fault that applies a 2PC load and then loses its reply; the txn waits
// PRECOMMITTED until the precommit timeout fires on the fake clock.
func ExampleServer_Inject() {
	clock := doristest.NewFakeClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	srv := doristest.NewServer(doristest.WithTable("demo.t(id INT)"), doristest.WithClock(clock))
	defer srv.Close()
	fault := srv.Inject(doristest.Fault{Kind: doristest.ResetAfterBody, Label: "job1_", Count: 1})

	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/api/demo/t/_stream_load", strings.NewReader("1\n"))
	req.SetBasicAuth(srv.User, srv.Password)
	req.Header.Set("Expect", "100-continue")
	req.Header.Set("label", "job1_0")
	req.Header.Set("two_phase_commit", "true")
	_, err := http.DefaultClient.Do(req)
	fmt.Println("reply lost:", err != nil)
	_ = fault.Wait(context.Background())
	fmt.Println(srv.Txns("demo")[0].State)

	srv.Advance(time.Hour)
	t := srv.Txns("demo")[0]
	fmt.Println(t.State, t.Reason)
	// Output:
	// reply lost: true
	// PRECOMMITTED
	// ABORTED timeout by txn manager
}

// Canonical text in Rows, and the same rows read into a struct with Scan.
func ExampleServer_Scan() {
	srv := doristest.NewServer(doristest.WithTable(
		"demo.orders(id BIGINT NOT NULL, amount DECIMAL(10,2), paid BOOLEAN, at DATETIME(3), note VARCHAR(16))"))
	defer srv.Close()
	streamLoad(srv, "demo", "orders", "1,+12.345,true,2025-01-02 03:04:05.6789,first\n2,7,0,2025-01-03,\\N\n",
		"column_separator", ",")

	fmt.Println(srv.Rows("demo", "orders"))

	type Order struct {
		ID     int64     `doris:"id"`
		Amount string    `doris:"amount"` // or a decimal type implementing encoding.TextUnmarshaler
		Paid   bool      `doris:"paid"`
		At     time.Time `doris:"at"`
		Note   *string   `doris:"note"` // nil for NULL
	}
	var orders []Order
	if err := srv.Scan("demo", "orders", &orders); err != nil {
		panic(err)
	}
	for _, o := range orders {
		fmt.Println(o.ID, o.Amount, o.Paid, o.At.Format(time.RFC3339Nano), o.Note == nil)
	}
	// Output:
	// [[1 12.35 1 2025-01-02 03:04:05.679 first] [2 7.00 0 2025-01-03 00:00:00.000 \N]]
	// 1 12.35 true 2025-01-02T03:04:05.679Z false
	// 2 7.00 false 2025-01-03T00:00:00Z true
}

// streamLoad PUTs body to the FE's stream load of db.table with the header
// name/value pairs; Go's client follows the FE's 307 to a BE.
func streamLoad(srv *doristest.Server, db, table, body string, headers ...string) {
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/api/"+db+"/"+table+"/_stream_load", strings.NewReader(body))
	req.SetBasicAuth(srv.User, srv.Password)
	req.Header.Set("Expect", "100-continue")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}
