package doristest

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// BenchmarkCountOnlyIngest PUTs a ~200 MB CSV straight to a BE of a
// WithCountOnly server over loopback and reports MB/s: the server must
// outrun a single client.
func BenchmarkCountOnlyIngest(b *testing.B) {
	s := NewServer(WithTable(demoDDL), WithCountOnly())
	defer s.Close()
	line := []byte("1234567890\tsome name of moderate length\n")
	body := bytes.Repeat(line, 200<<20/len(line))
	putLoop(b, s.BackendURLs()[0]+"/api/demo/t/_stream_load", body)
	if got, want := s.RowCount("demo", "t"), int64(b.N*(len(body)/len(line))); got != want {
		b.Fatalf("counted %d rows, want %d", got, want)
	}
}

// BenchmarkLoopbackBaseline is the same client against a handler that only
// discards the body: what one client can send on loopback.
func BenchmarkLoopbackBaseline(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 256<<10)
		_, _ = io.CopyBuffer(io.Discard, r.Body, buf)
		_, _ = io.WriteString(w, `{"Status": "Success"}`)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	putLoop(b, "http://"+ln.Addr().String()+"/", bytes.Repeat([]byte("1234567890\tsome name of moderate length\n"), 200<<20/41))
}

func putLoop(b *testing.B, url string, body []byte) {
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: 5 * time.Second,
		WriteBufferSize: 1 << 20, ReadBufferSize: 64 << 10}}
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		req, _ := http.NewRequest(http.MethodPut, url, bytes.NewReader(body))
		req.SetBasicAuth("root", "")
		req.Header.Set("Expect", "100-continue")
		req.Header.Set("label", "bench_"+strconv.Itoa(i))
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Contains(out, []byte(`"Status": "Success"`)) {
			b.Fatalf("load failed: %s", out)
		}
	}
	b.ReportMetric(float64(len(body))*float64(b.N)/time.Since(start).Seconds()/1e6, "MB/s")
}
