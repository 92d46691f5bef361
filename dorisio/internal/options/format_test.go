package options

import "testing"

// The words an error uses for the formats are dorisio's names, and each
// format a Write can produce has the headers its loads need.
func TestFormatsAreNamedAsDorisioNamesThem(t *testing.T) {
	if got, want := FormatChoices(), "dorisio.CSV, dorisio.JSON or dorisio.Arrow"; got != want {
		t.Errorf("FormatChoices() = %q, want %q", got, want)
	}
	if got, want := Arrow.Option(), "WithFormat(dorisio.Arrow)"; got != want {
		t.Errorf("Arrow.Option() = %q, want %q", got, want)
	}
	if Format("parquet").Known() || !JSON.Known() || !Arrow.Columnar() || CSV.Columnar() {
		t.Error("Known/Columnar: want csv, json and arrow known, only arrow columnar")
	}
	if FormatHeaders(JSON)["format"] != "json" || FormatHeaders(CSV)["format"] != "csv" {
		t.Errorf("headers: json %v, csv %v; want each to name its format", FormatHeaders(JSON), FormatHeaders(CSV))
	}
	for d, want := range map[Delivery]string{ExactlyOnce: "ExactlyOnce", AtLeastOnce: "AtLeastOnce", Grouped: "Grouped", GroupCommit: "GroupCommit"} {
		if d.String() != want {
			t.Errorf("Delivery(%d).String() = %q, want %q", d, d.String(), want)
		}
	}
}
