package filerange

import (
	"bytes"
	"io"
	"log/slog"
)

// crlfSniffer passes a file's bytes to the record scanner and looks at its
// first line on the way: a CSV file whose lines end "\r\n", read with the
// line delimiter "\n", loads every row's last value with a "\r" at its end
// ("alpha\r"), which Doris accepts and stores without a word. Nothing fails,
// so the file is named in a warning, once, with the option that reads it.
type crlfSniffer struct {
	r      io.Reader
	path   string
	done   bool
	lastCR bool // the bytes so far end with '\r' (a first line across reads)
}

// SniffCRLF returns r, read through a crlfSniffer naming path.
func SniffCRLF(r io.Reader, path string) io.Reader { return &crlfSniffer{r: r, path: path} }

func (s *crlfSniffer) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if !s.done && n > 0 {
		b := p[:n]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			s.done = true
			if i > 0 && b[i-1] == '\r' || i == 0 && s.lastCR {
				warnCRLF(s.path)
			}
		} else {
			s.lastCR = b[n-1] == '\r'
		}
	}
	return n, err
}

func warnCRLF(path string) {
	slog.Warn(`dorisio.WriteFiles: file ` + path + ` has lines ending "\r\n" but the line delimiter is "\n": each row's last value keeps the "\r" (Doris stores "alpha\r" for alpha). ` +
		`Load it with WithLineDelimiter("\r\n") (load: --line-delimiter '\r\n'); loading it as it is`)
}
