package dorisio

import "github.com/dorisbeam/dorisbeam/dorisio/internal/encode"

// Decimal is an exact decimal number for DECIMAL columns, kept as text so
// that no digit is lost on the way (a float64 holds about 16 significant
// digits; DECIMAL(38) holds 38). Write sends it as plain decimal text
// ("-1234567.89"), in JSON loads as a JSON string so that no reader turns it
// into a double. Build one with ParseDecimal, or convert a string you trust
// (Write checks it again and fails the bundle, naming the field and the row,
// on text that is not a decimal number). Doris rounds extra fraction digits
// to the column's scale, half up; a value with more integer digits than the
// column holds fails the bundle, naming the field (see "Values" in the
// package doc).
//
// Fields of type *big.Rat, *big.Float and *big.Int are written as exact
// decimal text too; a *big.Rat with no finite decimal expansion (1/3) is an
// error: round it to the column's scale first. Beam's default coder does not
// carry the value of these types from one stage to the next (their fields
// are unexported): use them only in a struct built by a DoFn fused with
// Write; Decimal survives every coder.
type Decimal = encode.Decimal

// ParseDecimal checks s: an optional sign, digits with an optional '.', and
// an optional exponent ("1.5e-3"). The Decimal holds the plain form
// ("0.0015"): DECIMAL columns take plain text on every Doris version.
func ParseDecimal(s string) (Decimal, error) { return encode.ParseDecimal(s) }
