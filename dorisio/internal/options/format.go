package options

import (
	"strings"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/encode"
)

// formats are the load formats a Write can produce: WithFormat's value,
// dorisio's name of it, and the format.
var formats = []formatEntry{{CSV, "CSV", encode.CSV}, {JSON, "JSON", encode.JSONLines}, {Arrow, "Arrow", encode.Arrow}}

type formatEntry struct {
	f    Format
	name string
	enc  encode.Format
}

// Encoding is f's load format (nil: unknown).
func Encoding(f Format) encode.Format { return f.encoding() }

func (f Format) encoding() encode.Format {
	for _, e := range formats {
		if e.f == f {
			return e.enc
		}
	}
	return nil
}

// Known reports whether f is a format Write can produce.
func (f Format) Known() bool { return f.encoding() != nil }

// Columnar reports whether f builds its bodies from struct rows typed by
// the table's columns (encode.Columnar).
func (f Format) Columnar() bool { return f.Known() && encode.IsColumnar(f.encoding()) }

// Title is dorisio's name of f: Arrow.
func (f Format) Title() string {
	for _, e := range formats {
		if e.f == f {
			return e.name
		}
	}
	return string(f)
}

// Option is how the user chose f: WithFormat(dorisio.Arrow).
func (f Format) Option() string { return "WithFormat(dorisio." + f.Title() + ")" }

// FormatChoices names the formats: "dorisio.CSV, dorisio.JSON or dorisio.Arrow".
func FormatChoices() string {
	var names []string
	for _, e := range formats {
		names = append(names, "dorisio."+e.name)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// FormatHeaders are the Stream Load headers format f needs.
func FormatHeaders(f Format) map[string]string { return f.encoding().Headers() }

// AddFormat makes f (dorisio's name: title) a format written by enc until
// restore is called: the engine's tests use it for a format no Write
// option names, such as one whose writer frames every load.
func AddFormat(f Format, title string, enc encode.Format) (restore func()) {
	kept := formats
	formats = append(formats[:len(formats):len(formats)], formatEntry{f, title, enc})
	return func() { formats = kept }
}
