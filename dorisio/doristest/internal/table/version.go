package table

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// DefaultVersion is the Doris version doristest plays unless told otherwise:
// the default of integration/doris/docker-compose.yml (a test checks that
// they agree).
const DefaultVersion = "2.1.11"

// Version is a Doris release (or master) whose behaviour the parser
// follows where releases differ.
type Version struct{ Major, Minor, Patch int }

// masterVersion orders master after every release.
var masterVersion = Version{99, 0, 0}

// ParseVersion reads "2.1.7", "3.0", "4.0.1" or "master".
func ParseVersion(s string) (Version, error) {
	if strings.EqualFold(s, "master") {
		return masterVersion, nil
	}
	parts := strings.Split(s, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("version %q: want MAJOR.MINOR[.PATCH] or master", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return Version{}, fmt.Errorf("version %q: want MAJOR.MINOR[.PATCH] or master", s)
		}
		n[i] = v
	}
	if n[0] < 2 {
		return Version{}, fmt.Errorf("version %q: doristest plays Doris 2.0 and later", s)
	}
	return Version{n[0], n[1], n[2]}, nil
}

func (v Version) String() string {
	if v == masterVersion {
		return "master"
	}
	return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
}

func (v Version) atLeast(major, minor int) bool {
	return v.Major > major || v.Major == major && v.Minor >= minor
}

// atLeastPatch is atLeast down to the patch release.
func (v Version) atLeastPatch(major, minor, patch int) bool {
	return v.atLeast(major, minor+1) || v.Major == major && v.Minor == minor && v.Patch >= patch
}

// The behaviours that differ by version. Each names its source; the first
// release of a change merged into master in 2025 is taken to be 4.0
// (uncertain for 3.1.x).

// encloseTrimsAlone: master trims the enclose character with `enclose`
// alone (PR #54937, Aug 2025); 2.x/3.0 keep a '"' enclose in the value
// unless trim_double_quotes is true (csv_reader.cpp: _not_trim_enclose =
// !_trim_double_quotes && _enclose == '"').
func (v Version) encloseTrimsAlone() bool { return v.atLeast(4, 0) }

// partialWithoutColumnsIsUpsert: 2.0-3.0's stream load planner refuses a
// partial update whose column list lacks a key ("Partial update should
// include all key columns, missing: <key>"), which an absent `columns`
// header always does; newer planners fill the list with every column, which
// makes the load a full-row upsert.
func (v Version) partialWithoutColumnsIsUpsert() bool { return v.atLeast(4, 0) }

// TakesCompressedJSON: before 3.0.5 the BE refuses a JSON load with any
// compress_type in its header phase (StreamLoadAction::_on_header:
// InternalError "compress data of JSON format is not supported."); 3.0.5
// and later decompress it (apache/doris#48990, picked to branch-3.0 as
// #49044). No 2.1 release is known to have it.
func (v Version) TakesCompressedJSON() bool {
	return v.atLeast(3, 1) || v.Major == 3 && v.Minor == 0 && v.Patch >= 5
}

// roundsDateTimeFraction: from 2.1 the CSV and JSON readers parse a
// DATETIME(n) value with the column's scale
// (DataTypeDateTimeV2SerDe::deserialize_one_cell_from_json ->
// read_datetime_v2_text_impl(..., scale) -> DateV2Value::from_date_str_base),
// which rounds the fraction digits beyond n half up, carrying into the
// seconds and the day (a 7th digit into DATETIME(6) since
// apache/doris#31205, picked into 2.1 as #31229 before 2.1.0). 2.0's serde
// passes no scale and the digits are cut (apache/doris#35585 reports 2.0.9
// truncating; 2.0's path is less certain than 2.1's).
func (v Version) roundsDateTimeFraction() bool { return v.atLeast(2, 1) }

// invalidUTF8Reason is the error-log reason of a CSV line that is not
// UTF-8 (CsvReader::_validate_line).
func (v Version) invalidUTF8Reason() string {
	if v.atLeast(4, 0) {
		return "Invalid file encoding: all CSV files must be UTF-8 encoded"
	}
	return "Unable to display, only support csv data in utf8 codec, please check the data encoding"
}

// SendsFirstErrorMsg: the stream load answer carries FirstErrorMsg, the
// first row of the error log, from master of September 2025 (protocol §4,
// §7); earlier releases give only ErrorURL.
func (v Version) SendsFirstErrorMsg() bool { return v.atLeast(4, 0) }

// Message renders a Message or 2PC msg, written in the default version's
// words, in this version's (protocol §4):
//   - "TStatus: " before the FE's text of an FE refusal relayed by the BE
//     came with 2.0.3: 2.0.0 and 2.0.2 answers quote none
//     (doris-flink-connector PR #359, apache/doris#28227), 2.0.3 has it
//     (apache/doris#27854);
//   - ", status [VISIBLE]." after a label's txn came with the fix picked
//     into branch-2.1 and branch-3.0 on 2024-08-07: 2.1.6 and 3.0.2 (3.0.1
//     was cut around then: uncertain);
//   - 2.0 reports too many filtered rows as INTERNAL_ERROR, before the
//     DATA_QUALITY_ERROR code.
func (v Version) Message(msg string) string {
	if !v.atLeastPatch(2, 0, 3) {
		msg = strings.Replace(msg, "TStatus: ", "", 1)
	}
	if !v.labelStatusInMessage() {
		msg = reLabelTxnStatus.ReplaceAllString(msg, "$1")
	}
	if !v.atLeast(2, 1) {
		msg = strings.Replace(msg, "[DATA_QUALITY_ERROR]too many filtered rows", "[INTERNAL_ERROR]too many filtered rows", 1)
	}
	return msg
}

var reLabelTxnStatus = regexp.MustCompile(`(relate to txn \[\d+\]), status \[[A-Z]+\]\.`)

func (v Version) labelStatusInMessage() bool {
	switch {
	case v.Major == 2 && v.Minor == 1:
		return v.Patch >= 6
	case v.Major == 3 && v.Minor == 0:
		return v.Patch >= 2
	}
	return v.atLeast(2, 2)
}
