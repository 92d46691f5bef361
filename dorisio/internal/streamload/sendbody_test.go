package streamload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// bodyEcho is a BE that answers -235 (retry with the same label) to the
// first `refuse` loads after reading their whole body, then Success; it
// keeps every body it read.
func bodyEcho(t *testing.T, refuse int) (*beCounter, http.HandlerFunc) {
	t.Helper()
	be := &beCounter{}
	return be, func(w http.ResponseWriter, r *http.Request) {
		n := be.note(r)
		if n <= refuse {
			io.WriteString(w, loadBody(-1, r.Header.Get("label"), "false", "Fail", "", "[E-235]tablet version count too many", 0, 0, ""))
			return
		}
		io.WriteString(w, loadBody(9, r.Header.Get("label"), "false", "Success", "", "OK", 1, 0, ""))
	}
}

func TestAFileSectionIsSentByteForByteAndAgainOnARetry(t *testing.T) {
	data := make([]byte, 3*sendStep+12345) // several steps of the fast path
	for i := range data {
		data[i] = byte('a' + i%26)
	}
	path := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	const off, n = 1000, 2*sendStep + 777
	rec, h := bodyEcho(t, 1)
	be := server(t, h)
	c, _ := newClient(t, []string{feRedirecting(t, be, nil).URL}, nil)
	req := loadReq("file-1", false, "")
	req.Body = NewFileBody(path, off, n, nil)
	res, err := c.Load(context.Background(), req)
	if err != nil {
		t.Fatal(record(err))
	}
	if res.Attempts != 2 || rec.count() != 2 {
		t.Fatalf("attempts %d, BE hits %d: want 2 (one refused, one resent)", res.Attempts, rec.count())
	}
	if !bytes.Equal(rec.body, data[off:off+n]) {
		t.Fatalf("the BE got %d bytes, not the section's %d bytes [%d, %d)", len(rec.body), n, off, off+n)
	}
}

func TestMemoryChunksAreSentInOrderAndAgainOnARetry(t *testing.T) {
	chunks := [][]byte{[]byte("1,a\n"), bytes.Repeat([]byte("2,b\n"), sendStep/4+3), nil, []byte("3,c\n")}
	want := bytes.Join(chunks, nil)
	rec, h := bodyEcho(t, 1)
	be := server(t, h)
	c, _ := newClient(t, []string{feRedirecting(t, be, nil).URL}, nil)
	req := loadReq("chunks-1", false, "")
	req.Body = chunksBody(chunks)
	if _, err := c.Load(context.Background(), req); err != nil {
		t.Fatal(record(err))
	}
	if rec.count() != 2 || !bytes.Equal(rec.body, want) {
		t.Fatalf("BE hits %d, last body %d bytes: want 2 hits and the %d bytes of the chunks in order", rec.count(), len(rec.body), len(want))
	}
	if !bytes.Equal(chunks[0], []byte("1,a\n")) || len(chunks[1]) != len(want)-8 {
		t.Fatal("sending changed the caller's slices")
	}
}

// chunksBody is a Body over slices, as dorisio's batches are.
type chunksBody [][]byte

func (b chunksBody) Open() (io.ReadCloser, error) { return NewSlicesReader(b), nil }
func (b chunksBody) Len() int64 {
	var n int64
	for _, c := range b {
		n += int64(len(c))
	}
	return n
}
func (b chunksBody) Close() error { return nil }

func TestAFileBodyWhoseCheckRefusesTheFileFailsTheLoadNamingWhy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(path, []byte("1,a\n2,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec, h := bodyEcho(t, 0)
	be := server(t, h)
	c, _ := newClient(t, []string{feRedirecting(t, be, nil).URL}, nil)
	req := loadReq("file-changed", false, "")
	req.Body = NewFileBody(path, 0, 8, func(fi os.FileInfo) error {
		return fmt.Errorf("%s changed: size %d, listed with 9", path, fi.Size())
	})
	_, err := c.Load(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), path+" changed: size 8, listed with 9") {
		t.Fatalf("err %v: want the check's words", record(err))
	}
	if rec.count() != 0 {
		t.Fatalf("the BE got %d loads of a refused file", rec.count())
	}
}

func TestAFileShorterThanItsSectionFailsTheLoadInsteadOfSendingLess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(path, bytes.Repeat([]byte("1,a\n"), 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 4)
	be := server(t, func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		if strings.HasSuffix(r.URL.Path, "/_stream_load") {
			got <- err // not the abort of the failed load's label, which may arrive first
		}
		if err != nil {
			return
		}
		io.WriteString(w, loadBody(9, r.Header.Get("label"), "false", "Success", "", "OK", 1, 0, ""))
	})
	c, _ := newClient(t, []string{feRedirecting(t, be, nil).URL}, func(cfg *Config) { cfg.Retry.MaxAttempts = 1 })
	req := loadReq("file-short", false, "")
	req.Body = NewFileBody(path, 0, 4000, nil)
	if err := os.Truncate(path, 2000); err != nil { // the file shrinks after it was measured
		t.Fatal(err)
	}
	_, err := c.Load(context.Background(), req)
	if err == nil {
		t.Fatal("a load of a file that shrank succeeded")
	}
	record(err)
	if serr := <-got; serr == nil || !errors.Is(serr, io.ErrUnexpectedEOF) {
		t.Fatalf("the BE read the short body with %v, want an unexpected EOF (not a complete body)", serr)
	}
}

// streamBody is a body of unknown length, as a decompressing stream is.
type streamBody []byte

func (b streamBody) Open() (io.ReadCloser, error) {
	return io.NopCloser(io.MultiReader(bytes.NewReader(b[:len(b)/2]), bytes.NewReader(b[len(b)/2:]))), nil
}
func (b streamBody) Len() int64   { return -1 }
func (b streamBody) Close() error { return nil }

func TestABodyOfUnknownLengthIsSentChunkedAndAgainOnARetry(t *testing.T) {
	var mu sync.Mutex // guards chunked
	var chunked []bool
	rec, h := bodyEcho(t, 1)
	be := server(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		chunked = append(chunked, len(r.TransferEncoding) == 1 && r.TransferEncoding[0] == "chunked" && r.ContentLength == -1)
		h(w, r)
	})
	c, _ := newClient(t, []string{feRedirecting(t, be, nil).URL}, nil)
	want := bytes.Repeat([]byte("1,a\n"), 50000)
	req := loadReq("stream-1", false, "")
	req.Body = streamBody(want)
	if _, err := c.Load(context.Background(), req); err != nil {
		t.Fatal(record(err))
	}
	mu.Lock()
	defer mu.Unlock()
	if rec.count() != 2 || !bytes.Equal(rec.body, want) || len(chunked) != 2 || !chunked[0] || !chunked[1] {
		t.Fatalf("BE hits %d, chunked %v, body %d bytes: want 2 chunked sends of %d bytes", rec.count(), chunked, len(rec.body), len(want))
	}
}

func TestACompressedBodyIsSentAsItIsWithItsCompressType(t *testing.T) {
	rec, h := bodyEcho(t, 0)
	be := server(t, h)
	c, _ := newClient(t, []string{feRedirecting(t, be, nil).URL}, nil)
	req := loadReq("bz2-1", false, "BZh9 not really bzip2")
	req.Compressed = "bz2"
	if _, err := c.Load(context.Background(), req); err != nil {
		t.Fatal(record(err))
	}
	if got := rec.headers.Get("compress_type"); got != "bz2" || string(rec.body) != "BZh9 not really bzip2" {
		t.Fatalf("compress_type %q, body %q: want bz2 and the body unchanged", got, rec.body)
	}
	req.Label, req.Compression = "bz2-2", "gz"
	_, err := c.Load(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "not compressed again") {
		t.Fatalf("Compressed with Compression: err %v", record(err))
	}
	req.Label, req.Compression, req.Compressed = "zst-1", "", "zstd"
	if _, err := c.Load(context.Background(), req); err == nil || !strings.Contains(err.Error(), "decompress other forms") {
		t.Fatalf("Compressed zstd: err %v", record(err))
	}
}

// A held file body (NewHeldFileBody) sends all but its last byte, then
// waits for its hold, longer than Timeouts.Idle, without being taken for a
// stalled server; a hold's error fails the load and the BE never gets the
// last byte.
func TestAHeldFileBodyWaitsForItsHoldPastTheIdleBound(t *testing.T) {
	data := bytes.Repeat([]byte("1,a\n"), 1000)
	path := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	rec, h := bodyEcho(t, 0)
	be := server(t, h)
	c, _ := newClient(t, []string{feRedirecting(t, be, nil).URL}, func(c *Config) { c.Timeouts.Idle = 500 * time.Millisecond })
	req := loadReq("held-1", false, "")
	req.Body = NewHeldFileBody(path, 0, int64(len(data)), nil, func() error { time.Sleep(1500 * time.Millisecond); return nil })
	res, err := c.Load(context.Background(), req)
	if err != nil {
		t.Fatal(record(err))
	}
	if res.Attempts != 1 || !bytes.Equal(rec.body, data) {
		t.Fatalf("attempts %d, the BE got %d bytes: want 1 attempt and the %d bytes", res.Attempts, len(rec.body), len(data))
	}

	req = loadReq("held-2", false, "")
	req.Body = NewHeldFileBody(path, 0, int64(len(data)), nil, func() error { return errors.New("the range before did not load") })
	if _, err := c.Load(context.Background(), req); err == nil || !strings.Contains(err.Error(), "the range before did not load") {
		t.Fatalf("err %v: want the hold's words", record(err))
	}
}
