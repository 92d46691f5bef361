package dorisio

import (
	"fmt"
	"io"
	"math/big"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/coder"
)

// Beam's schema coder writes a struct field of type big.Int, big.Rat or
// big.Float (or a pointer to one) as the struct it is, whose fields are all
// unexported: every value crossed beam.Create or a shuffle as 0, and a
// LARGEINT or DECIMAL column loaded zeros without a word. Schema providers
// for them carry their exact text instead (a big.Float's gob form: its
// value, precision and rounding mode), so such a field keeps its value
// wherever its element is coded.
func init() {
	beam.RegisterSchemaProvider(reflect.TypeOf(big.Int{}), bigSchema{
		rep:    reflect.TypeOf(bigIntRow{}),
		encode: func(v any) (string, bool) { return textOf(v, (*big.Int).String) },
		decode: func(text string) (any, error) {
			var n big.Int
			if _, ok := n.SetString(text, 10); !ok {
				return nil, fmt.Errorf("dorisio: a coded big.Int is %q, not a decimal integer", text)
			}
			return n, nil
		},
	})
	beam.RegisterSchemaProvider(reflect.TypeOf(big.Rat{}), bigSchema{
		rep:    reflect.TypeOf(bigRatRow{}),
		encode: func(v any) (string, bool) { return textOf(v, (*big.Rat).RatString) },
		decode: func(text string) (any, error) {
			var r big.Rat
			if _, ok := r.SetString(text); !ok {
				return nil, fmt.Errorf("dorisio: a coded big.Rat is %q, not a fraction", text)
			}
			return r, nil
		},
	})
	beam.RegisterSchemaProvider(reflect.TypeOf(big.Float{}), bigSchema{
		rep: reflect.TypeOf(bigFloatRow{}),
		encode: func(v any) (string, bool) {
			return textOf(v, func(f *big.Float) string {
				b, _ := f.GobEncode() // never fails: it only formats
				return string(b)
			})
		},
		decode: func(text string) (any, error) {
			var f big.Float
			if err := f.GobDecode([]byte(text)); err != nil {
				return nil, fmt.Errorf("dorisio: a coded big.Float does not decode: %w", err)
			}
			return f, nil
		},
	})
}

// textOf is text of v, a T or a *T; false for any other type.
func textOf[T any](v any, text func(*T) string) (string, bool) {
	switch x := v.(type) {
	case T:
		return text(&x), true
	case *T:
		return text(x), true
	}
	return "", false
}

// bigSchema codes one of math/big's types as a row of one field, its text
// (encode, decode); rep is the schema's representative type.
type bigSchema struct {
	rep    reflect.Type
	encode func(any) (string, bool)
	decode func(string) (any, error)
}

// The representative types: a row of one field, the value's text.
type (
	bigIntRow   struct{ Decimal string }
	bigRatRow   struct{ Fraction string }
	bigFloatRow struct{ Gob []byte }
)

func (s bigSchema) FromLogicalType(rt reflect.Type) (reflect.Type, error) {
	if _, ok := s.encode(reflect.New(rt).Interface()); !ok {
		return nil, fmt.Errorf("dorisio: the %v schema provider cannot code %v", s.rep, rt)
	}
	return s.rep, nil
}

func (s bigSchema) BuildEncoder(reflect.Type) (func(any, io.Writer) error, error) {
	return func(v any, w io.Writer) error {
		text, ok := s.encode(v)
		if !ok {
			return fmt.Errorf("dorisio: the %v schema provider was given a %T", s.rep, v)
		}
		if err := coder.WriteSimpleRowHeader(1, w); err != nil {
			return err
		}
		return coder.EncodeBytes([]byte(text), w)
	}, nil
}

func (s bigSchema) BuildDecoder(reflect.Type) (func(io.Reader) (any, error), error) {
	return func(r io.Reader) (any, error) {
		if n, _, err := coder.ReadRowHeader(r); err != nil {
			return nil, err
		} else if n != 1 {
			return nil, fmt.Errorf("dorisio: a coded %v has %d fields, want 1", s.rep, n)
		}
		b, err := coder.DecodeBytes(r)
		if err != nil {
			return nil, err
		}
		return s.decode(string(b))
	}, nil
}
