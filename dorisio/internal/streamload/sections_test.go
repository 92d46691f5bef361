package streamload

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Many small files' sections and the bytes between them go out as one
// body, in order, from the files (several steps of the fast path), and
// again on a retry.
func TestSectionsOfManyFilesAreSentInOrderAndAgainOnARetry(t *testing.T) {
	dir := t.TempDir()
	var secs []Section
	var want []byte
	for i := range 40 {
		data := bytes.Repeat([]byte(fmt.Sprintf("%d,file %d\n", i, i)), 1+i*i*200) // the last ones span fast-path steps together
		path := filepath.Join(dir, fmt.Sprintf("f%02d.csv", i))
		if err := os.WriteFile(path, append([]byte("header\n"), data...), 0o644); err != nil {
			t.Fatal(err)
		}
		secs = append(secs, Section{Path: path, Offset: 7, Length: int64(len(data))})
		want = append(want, data...)
		if i%3 == 0 {
			secs = append(secs, Section{Data: []byte(fmt.Sprintf("%d,between\n", i))}, Section{Data: nil})
			want = append(want, fmt.Sprintf("%d,between\n", i)...)
		}
	}
	if len(want) < 2*sendStep {
		t.Fatalf("the body is %d bytes: want it to span fast-path steps", len(want))
	}
	rec, h := bodyEcho(t, 1)
	be := server(t, h)
	c, _ := newClient(t, []string{feRedirecting(t, be, nil).URL}, nil)
	req := loadReq("sections-1", false, "")
	req.Body = NewSectionsBody(secs)
	if req.Body.Len() != int64(len(want)) {
		t.Fatalf("Len %d, want %d", req.Body.Len(), len(want))
	}
	if _, err := c.Load(context.Background(), req); err != nil {
		t.Fatal(record(err))
	}
	if rec.count() != 2 || !bytes.Equal(rec.body, want) {
		t.Fatalf("BE hits %d, last body %d bytes: want 2 hits and the %d bytes of the sections in order", rec.count(), len(rec.body), len(want))
	}
}

// A file of the body that changed since it was measured fails the load
// before a byte is sent, in the check's words; a file of the body that is
// gone fails it naming the file.
func TestSectionsWhoseFileChangedFailTheLoadNamingWhy(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("1,a\n2,b\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(fi os.FileInfo) error {
		if fi.Size() != 8 {
			return fmt.Errorf("file %s changed: size %d, listed with 8", b, fi.Size())
		}
		return nil
	}
	rec, h := bodyEcho(t, 0)
	be := server(t, h)
	c, _ := newClient(t, []string{feRedirecting(t, be, nil).URL}, func(cfg *Config) { cfg.Retry.MaxAttempts = 1 })
	req := loadReq("sections-changed", false, "")
	req.Body = NewSectionsBody([]Section{{Path: a, Length: 8, Check: check}, {Path: b, Length: 8, Check: check}})
	if err := os.WriteFile(b, []byte("1,a\n2,b\n3,c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := c.Load(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "file "+b+" changed: size 12, listed with 8") {
		t.Fatalf("err %v: want the check's words", record(err))
	}
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	req = loadReq("sections-gone", false, "")
	req.Body = NewSectionsBody([]Section{{Path: a, Length: 8, Check: check}, {Path: b, Length: 8, Check: check}})
	if _, err = c.Load(context.Background(), req); err == nil || !strings.Contains(err.Error(), b) {
		t.Fatalf("err %v: want the missing file named", record(err))
	}
	if rec.count() != 0 {
		t.Fatalf("the BE got %d loads of a changed file", rec.count())
	}
}
