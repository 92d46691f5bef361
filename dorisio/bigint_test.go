package dorisio

import (
	"math/big"
	"reflect"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

type largeRow struct {
	ID  int64    `doris:"id"`
	Big *big.Int `doris:"big"`
}

func init() { beam.RegisterType(reflect.TypeOf((*largeRow)(nil)).Elem()) }

// A *big.Int field keeps its value through beam.Create
// and a shuffle into a LARGEINT column. Before, Beam's schema coder wrote
// big.Int's unexported fields, none, and every value loaded as 0.
func TestBigIntFieldsKeepTheirValuesThroughTheRunner(t *testing.T) {
	srv := startServer(t, doristest.WithTable("demo.large(id BIGINT NOT NULL, big LARGEINT)"))
	least, _ := new(big.Int).SetString("-170141183460469231731687303715884105728", 10)
	rows := []largeRow{{ID: 1, Big: least}, {ID: 2}, {ID: 3, Big: big.NewInt(7)}}
	_, err := runPipeline(t, func(s beam.Scope) {
		Write(s, configFor(srv, "large"), beam.Reshuffle(s, beam.CreateList(s, rows)), WithDelivery(AtLeastOnce))
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "large", [][]string{
		{"1", least.String()},
		{"2", `\N`},
		{"3", "7"},
	})
}

type decimalRow struct {
	ID    int64      `doris:"id"`
	Rat   *big.Rat   `doris:"rat"`
	Float *big.Float `doris:"flt"`
}

func init() { beam.RegisterType(reflect.TypeOf((*decimalRow)(nil)).Elem()) }

// *big.Rat and *big.Float fields keep their values through beam.Create and
// a shuffle into DECIMAL columns, a Float its precision too. Before, they
// crossed the runner as 0 (their fields are unexported) and loaded 0.00.
func TestBigRatAndFloatFieldsKeepTheirValuesThroughTheRunner(t *testing.T) {
	srv := startServer(t, doristest.WithTable("demo.dec(id BIGINT NOT NULL, rat DECIMAL(38,20), flt DECIMAL(38,20))"))
	third, _ := new(big.Float).SetPrec(200).SetString("0.12345678901234567890123")
	rows := []decimalRow{
		{ID: 1, Rat: big.NewRat(1234, 100), Float: big.NewFloat(2.5)},
		{ID: 2},
		{ID: 3, Rat: big.NewRat(-1, 8), Float: third},
	}
	_, err := runPipeline(t, func(s beam.Scope) {
		Write(s, configFor(srv, "dec"), beam.Reshuffle(s, beam.CreateList(s, rows)), WithDelivery(AtLeastOnce))
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "dec", [][]string{
		{"1", "12.34000000000000000000", "2.50000000000000000000"},
		{"2", `\N`, `\N`},
		{"3", "-0.12500000000000000000", "0.12345678901234567890"},
	})
}
