package dorisio

import (
	"fmt"
	"io"
	"math/big"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/coder"
)

// Beam's schema coder writes a struct field of type big.Int or *big.Int as
// the struct it is, whose fields are all unexported: every value crossed
// beam.Create or a shuffle as 0, and a LARGEINT column loaded zeros without
// a word. A schema provider for big.Int carries its decimal text instead,
// so a *big.Int field keeps its value wherever its element is coded.
func init() {
	beam.RegisterSchemaProvider(reflect.TypeOf(big.Int{}), bigIntSchema{})
}

// bigIntSchema codes a big.Int as a row of one string field, its decimal
// text.
type bigIntSchema struct{}

// bigIntRow is big.Int's schema representative type.
type bigIntRow struct{ Decimal string }

func (bigIntSchema) FromLogicalType(rt reflect.Type) (reflect.Type, error) {
	if rt != reflect.TypeOf(big.Int{}) {
		return nil, fmt.Errorf("dorisio: the big.Int schema provider cannot code %v", rt)
	}
	return reflect.TypeOf(bigIntRow{}), nil
}

func (bigIntSchema) BuildEncoder(reflect.Type) (func(any, io.Writer) error, error) {
	return func(v any, w io.Writer) error {
		var text string
		switch n := v.(type) {
		case big.Int:
			text = n.String()
		case *big.Int:
			text = n.String()
		default:
			return fmt.Errorf("dorisio: the big.Int schema provider was given a %T", v)
		}
		if err := coder.WriteSimpleRowHeader(1, w); err != nil {
			return err
		}
		return coder.EncodeStringUTF8(text, w)
	}, nil
}

func (bigIntSchema) BuildDecoder(reflect.Type) (func(io.Reader) (any, error), error) {
	return func(r io.Reader) (any, error) {
		if n, _, err := coder.ReadRowHeader(r); err != nil {
			return nil, err
		} else if n != 1 {
			return nil, fmt.Errorf("dorisio: a coded big.Int has %d fields, want 1", n)
		}
		text, err := coder.DecodeStringUTF8(r)
		if err != nil {
			return nil, err
		}
		var n big.Int
		if _, ok := n.SetString(text, 10); !ok {
			return nil, fmt.Errorf("dorisio: a coded big.Int is %q, not a decimal integer", text)
		}
		return n, nil
	}, nil
}
