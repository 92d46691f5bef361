package dorisio

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// loadHeaders is an FE in front of a doristest server that notes the
// enclose header of every stream load before redirecting it to the real FE
// (which redirects it to a BE); other requests pass through.
type loadHeaders struct {
	mu       sync.Mutex // guards enclose
	enclose  []string   // per load sent, its enclose header ("" without)
	frontend *httptest.Server
}

func newLoadHeaders(t *testing.T, srv *doristest.Server) *loadHeaders {
	t.Helper()
	fe, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(fe)
	h := &loadHeaders{}
	h.frontend = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/_stream_load") {
			proxy.ServeHTTP(w, r)
			return
		}
		h.mu.Lock()
		h.enclose = append(h.enclose, r.Header.Get("enclose"))
		h.mu.Unlock()
		http.Redirect(w, r, srv.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	t.Cleanup(h.frontend.Close)
	return h
}

// counts returns the loads sent with enclose and without.
func (h *loadHeaders) counts() (with, without int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.enclose {
		if e == "" {
			without++
		} else {
			with++
		}
	}
	return with, without
}

// A quoted CSV whose quotes only wrap whole values (what spreadsheets and
// exporters write: 7,"click","note 7") is sent without enclose, the quotes
// taken off by trim_double_quotes: Doris splits it as plain CSV, which it
// does faster. A range holding a quoted value with a separator, a line
// break or a doubled quote inside keeps enclose, and one holding a quoted
// \N is transcoded. Every value loads byte-equal, on versions that keep
// and that trim an enclose.
func TestQuotesThatWrapWholeValuesAreSentWithoutEncloseAndLoadByteEqual(t *testing.T) {
	var rows [][]string
	var file bytes.Buffer
	w := csv.NewWriter(&file)
	for i := 0; i < 300; i++ {
		body := fmt.Sprintf("note %d", i)
		switch {
		case i%17 == 0:
			body = ""
		case i >= 200 && i < 250:
			body = awkward(i) // commas, line breaks, doubled quotes inside
		case i == 280:
			body = `\N` // the string, quoted: Doris would read NULL
		}
		rows = append(rows, []string{fmt.Sprint(i), body})
		if i < 200 || i >= 250 {
			// encoding/csv quotes only where it must: quote every value,
			// as exporters do.
			fmt.Fprintf(&file, "%d,\"%s\"\n", i, body)
			continue
		}
		w.Write(rows[i])
		w.Flush()
	}
	for _, version := range []string{"2.1.11", "master"} {
		t.Run(version, func(t *testing.T) {
			srv := startServer(t, doristest.WithTable(docsDDL), doristest.WithDorisVersion(version))
			fe := newLoadHeaders(t, srv)
			cfg := configFor(srv, "docs")
			cfg.FEs = []string{fe.frontend.URL}
			path := writeFile(t, t.TempDir(), "docs.csv", file.Bytes())
			if err := loadFiles(t, cfg, []string{path}, int64(len(rows)), Files{RangeBytes: 300}); err != nil {
				t.Fatal(err)
			}
			wantRows(t, srv, "docs", rows)
			with, without := fe.counts()
			if without < 5 || with < 3 {
				t.Errorf("%d loads sent with enclose, %d without: want the ranges of wrapped values (8 or 9) without it, the others with it", with, without)
			}
		})
	}
}
