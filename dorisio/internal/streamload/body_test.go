package streamload

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/pierrec/lz4/v4"
)

func readAll(t *testing.T, b Body) []byte {
	t.Helper()
	r, err := b.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestBodyBufferKeepsSmallBodiesInMemoryAndSpoolsLargeOnes(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name      string
		chunks    []string
		wantFiles int
	}{
		{"a body under the threshold stays in memory", []string{"abc", "def"}, 0},
		{"a body over the threshold goes to one spool file", []string{"abcdef", "ghijkl", "m"}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			buf := NewBodyBuffer(10, dir)
			var want []byte
			for _, c := range tc.chunks {
				if _, err := buf.Write([]byte(c)); err != nil {
					t.Fatal(err)
				}
				want = append(want, c...)
			}
			if buf.Len() != int64(len(want)) {
				t.Errorf("Len %d", buf.Len())
			}
			files, _ := filepath.Glob(filepath.Join(dir, "*"))
			if len(files) != tc.wantFiles {
				t.Errorf("spool files %v, want %d", files, tc.wantFiles)
			}
			if tc.wantFiles == 1 && buf.mem.Cap() != 0 {
				t.Errorf("memory copy kept (%d bytes) after spooling", buf.mem.Cap())
			}
			b, err := buf.Body()
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 2; i++ { // replayable
				if got := readAll(t, b); !bytes.Equal(got, want) || b.Len() != int64(len(want)) {
					t.Errorf("replay %d: %q (Len %d), want %q", i, got, b.Len(), want)
				}
			}
			if _, err := buf.Write([]byte("x")); err == nil {
				t.Errorf("Write after Body succeeded")
			}
			b.Close()
			if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
				t.Errorf("Close left %v", files)
			}
			if _, err := b.Open(); err == nil {
				t.Errorf("Open after Close succeeded")
			}
		})
	}
}

func TestCompressedLoadsSendTheCompressTypeAndTheSameBytesOnRetry(t *testing.T) {
	plain := bytes.Repeat([]byte("1,hello world\n"), 500)
	decoders := map[string]func(io.Reader) (io.Reader, error){
		"gz":  func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) },
		"lz4": func(r io.Reader) (io.Reader, error) { return lz4.NewReader(r), nil },
	}
	for kind, dec := range decoders {
		t.Run(kind+" bodies decompress to the original rows on every attempt", func(t *testing.T) {
			var bodies [][]byte
			beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
				raw, _ := io.ReadAll(r.Body)
				bodies = append(bodies, raw)
				zr, err := dec(bytes.NewReader(raw))
				var got []byte
				if err == nil {
					got, err = io.ReadAll(zr)
				}
				if err != nil || !bytes.Equal(got, plain) || r.Header.Get("compress_type") != kind {
					t.Errorf("compress_type %q, decode err %v, %d bytes", r.Header.Get("compress_type"), err, len(got))
				}
				if len(bodies) == 1 {
					io.WriteString(w, loadBody(-1, "z", "false", "Fail", "", "[E-240]Have not get FE Master heartbeat yet", 0, 0, ""))
					return
				}
				io.WriteString(w, loadBody(1, "z", "false", "Success", "", "OK", 500, 0, ""))
			})
			fe := feRedirecting(t, beSrv, nil)
			c, _ := newClient(t, []string{fe.URL}, nil)
			req := loadReq("z", false, string(plain))
			req.Compression = kind
			if _, err := c.Load(context.Background(), req); err != nil {
				t.Fatalf("Load: %v", record(err))
			}
			if len(bodies) != 2 || !bytes.Equal(bodies[0], bodies[1]) || len(bodies[0]) >= len(plain) {
				t.Errorf("attempt bodies differ or are not compressed")
			}
		})
	}
}

func TestUnknownCompressionIsRefused(t *testing.T) {
	c, _ := newClient(t, []string{"http://127.0.0.1:1"}, nil)
	req := loadReq("z", false, "x")
	req.Compression = "zstd"
	_, err := c.Load(context.Background(), req)
	mustKind(t, err, nil)
	_ = os.Remove
}
