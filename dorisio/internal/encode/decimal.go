package encode

import (
	"fmt"
	"reflect"
	"regexp"

	"github.com/dorisbeam/dorisbeam/internal/textfmt"
)

// Decimal is dorisio.Decimal (documented there): an exact decimal number
// for DECIMAL columns, kept as text so that no digit is lost on the way.
type Decimal string

// ParseDecimal is dorisio.ParseDecimal (documented there).
func ParseDecimal(s string) (Decimal, error) {
	plain, err := textfmt.PlainDecimal(s)
	if err != nil {
		return "", fmt.Errorf("dorisio.Decimal %q: %w", s, err)
	}
	return Decimal(plain), nil
}

// String returns the decimal's text.
func (d Decimal) String() string { return string(d) }

// appendDecimalText appends the plain form of decimal text s.
func appendDecimalText(dst []byte, s string) ([]byte, error) {
	plain, err := textfmt.PlainDecimal(s)
	if err != nil {
		return dst, fmt.Errorf("dorisio.Decimal %q: %w", s, err)
	}
	return append(dst, plain...), nil
}

// ownDecimal finds this package's Decimal in a type's text.
var ownDecimal = regexp.MustCompile(`(^|[^\pL\pN_])encode\.Decimal\b`)

// typeText names t in messages as users spell it: Decimal is
// dorisio.Decimal to them.
func typeText(t reflect.Type) string {
	return ownDecimal.ReplaceAllString(t.String(), "${1}dorisio.Decimal")
}
