// Command probe writes a test stream of several bundles with a Write that
// heads its stage on prism, then prints what dorisio's metrics say about
// early commit: the loads, those the commit stage found committed already
// (by the bundle's finalization), and the bundles whose DoFn instance was
// no longer finalized. integration/finalize builds it against the Beam
// module as released and against a copy patched with
// docs/beam-finalize.patch.
//
// Against the in-process doristest server by default; against a real Doris
// with DORISIO_TEST_FE, DORISIO_TEST_USER, DORISIO_TEST_PASSWORD and
// DORISIO_TEST_DB (integration/doris/init.sql creates its e2e_events table).
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"
	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

const table = "e2e_events"

func main() {
	bundles := flag.Int("bundles", 6, "test stream element groups, one bundle each")
	rows := flag.Int("rows", 100, "rows per bundle")
	flag.Parse()
	beam.Init()
	if err := run(*bundles, *rows); err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		os.Exit(1)
	}
}

func run(bundles, rows int) error {
	var b [6]byte
	_, _ = rand.Read(b[:])
	runID := "f" + hex.EncodeToString(b[:])
	cfg := dorisio.Config{Table: table, LabelPrefix: "finalize-" + runID}
	var srv *doristest.Server
	if fe := os.Getenv("DORISIO_TEST_FE"); fe != "" {
		cfg.FEs, cfg.User, cfg.PasswordEnv, cfg.Database = []string{fe}, os.Getenv("DORISIO_TEST_USER"), "DORISIO_TEST_PASSWORD", os.Getenv("DORISIO_TEST_DB")
		if cfg.User == "" {
			cfg.User = "root"
		}
	} else {
		srv = doristest.NewServer(doristest.WithTable("dorisio_test." + table + "(run VARCHAR(40) NOT NULL, id BIGINT NOT NULL, name VARCHAR(16))"))
		defer srv.Close()
		cfg.FEs, cfg.User, cfg.Password, cfg.Database = []string{srv.URL}, srv.User, srv.Password, "dorisio_test"
	}

	stream := teststream.NewConfig()
	for g := 0; g < bundles; g++ {
		var group []any
		for i := 0; i < rows; i++ {
			id := g*rows + i
			group = append(group, fmt.Sprintf("%s,%d,n%d\n", runID, id, id))
		}
		if err := stream.AddElementList(int64(g*1000), group); err != nil {
			return err
		}
		if err := stream.AdvanceWatermark(int64(g*1000 + 999)); err != nil {
			return err
		}
	}
	if err := stream.AdvanceWatermarkToInfinity(); err != nil {
		return err
	}
	p, s := beam.NewPipelineWithRoot()
	// Write reads straight from the test stream: prism finalizes a stage
	// only where a finalizing ParDo consumes its input. Stream batching off:
	// a load per bundle, committed early by its finalization.
	dorisio.Write(s, cfg, teststream.Create(s, stream), dorisio.WithStreamBatching(false))
	pr, err := beam.Run(context.Background(), "prism", p)
	if err != nil {
		return err
	}
	q := pr.Metrics().Query(func(r metrics.SingleResult) bool { return r.Namespace() == "dorisio" })
	sum := func(name string) int64 {
		var n int64
		for _, c := range q.Counters() {
			if c.Name() == name {
				n += c.Result()
			}
		}
		return n
	}
	stored := "-1 (not read from a real Doris)"
	if srv != nil {
		n := 0
		for _, r := range srv.Rows("dorisio_test", table) {
			if strings.HasPrefix(r[0], runID) {
				n++
			}
		}
		stored = fmt.Sprint(n)
	}
	fmt.Printf("loads %d, committed early %d, unfinalized bundles %d, rows %d of %d, table rows %s\n",
		sum("loads"), sum("already_committed"), sum("unfinalized_bundles"), sum("rows"), bundles*rows, stored)
	return nil
}
