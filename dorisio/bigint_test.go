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
