package table

import (
	"io"
	"slices"
	"strings"
)

// A decoder reads a whole (already decompressed) load body of one format
// into a batch, as Spec.Parse says.
type decoder func(sp *Spec, r io.Reader, countOnly bool) (*Batch, error)

// decoders read the bodies of each format doristest loads, by the name of
// its "format" header as dorisio writes it (encode.Format.Name; not
// imported: the Stream Load client's tests import doristest): the one place
// a format's body meets doristest, a decoder file of its own adding itself
// (arrow.go). Doris' other formats are refused as not supported.
var decoders = map[string]decoder{
	"csv":  decodeText,
	"json": decodeText,
}

// dorisFormats are the format header values Doris knows (after the
// csv_with_names dialects are read as csv).
var dorisFormats = []string{"csv", "json", "parquet", "orc", "arrow", "hive_text"}

// KnownFormat reports whether Doris knows format header value f.
func KnownFormat(f string) bool {
	f = strings.ToLower(strings.TrimSpace(f))
	return f == "" || f == "csv_with_names" || f == "csv_with_names_and_types" || slices.Contains(dorisFormats, f)
}

// decoderNames lists the formats doristest loads.
func decoderNames() string {
	names := []string{"csv_with_names", "csv_with_names_and_types"}
	for n := range decoders {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
