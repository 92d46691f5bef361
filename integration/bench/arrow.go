package main

// arrow_vs_csv: the same struct rows written by dorisio.Write (a pipeline
// on prism, in this process) into an in-process doristest, with
// WithFormat(Arrow) and with CSV. Two figures per format, medians of -runs
// interleaved rounds:
//
//   - rows per CPU-second of this process (client, prism and a count-only
//     doristest that does not decode the body): the cost of encoding and
//     sending; arrow_vs_csv is Arrow's divided by CSV's. "Bytes of rows" are
//     the CSV body's bytes for both (the same rows).
//   - doristest's decode time per MB of body: the CPU of the same pipeline
//     into a doristest that decodes and checks every value, minus the
//     count-only run's, per MB of that format's body.
//
// doristest's decoders are not Doris': a real BE converts Arrow columns to
// its blocks without parsing text (Doris' docs: about 10× cheaper than CSV),
// while doristest renders Arrow values as text and checks them as CSV.

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

type arrowBenchRow struct {
	ID    int64           `doris:"id"`
	Flag  bool            `doris:"flag"`
	Price dorisio.Decimal `doris:"price"`
	F     float64         `doris:"f"`
	At    time.Time       `doris:"at"`
	Name  string          `doris:"name"`
}

func init() { beam.RegisterType(reflect.TypeOf((*arrowBenchRow)(nil)).Elem()) }

const arrowBenchDDL = "bench.rows(id BIGINT NOT NULL, flag BOOLEAN, price DECIMAL(12,3), f DOUBLE, at DATETIME(6), name VARCHAR(64))"

// arrowFigures are one format's measurements.
type arrowFigures struct {
	RowsPerCPUSec  float64 `json:"rows_per_cpu_s"`
	CSVMBPerCPUSec float64 `json:"csv_mb_per_cpu_s"` // bytes of rows (the CSV body's) per CPU-second
	BodyMB         float64 `json:"body_mb"`
	DecodeMsPerMB  float64 `json:"doristest_decode_ms_per_mb"`
}

// arrow measures arrow_vs_csv.
func (b *bencher) arrow(ctx context.Context, res *Result) error {
	beam.Init()
	n := b.cfg.ArrowRows
	rows := make([]arrowBenchRow, n)
	at := time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC)
	for i := range rows {
		rows[i] = arrowBenchRow{ID: int64(i), Flag: i%2 == 0, Price: dorisio.Decimal(fmt.Sprintf("%d.%03d", i, i%1000)), F: float64(i) / 3,
			At: at.Add(time.Duration(i) * time.Microsecond), Name: fmt.Sprintf("name %d of the bench", i)}
	}
	fmt.Fprintf(b.log, "arrow runs: %d × (CSV, Arrow) × (count-only, decoding doristest) of %d rows\n", b.cfg.Runs, n)
	type sample struct{ cpuCount, cpuFull, mb float64 }
	runs := map[dorisio.Format][]sample{}
	for i := 0; i < b.cfg.Runs; i++ {
		for _, f := range []dorisio.Format{dorisio.CSV, dorisio.Arrow} {
			var s sample
			for _, countOnly := range []bool{true, false} {
				cpu, body, err := arrowPipeline(ctx, rows, f, countOnly)
				if err != nil {
					return err
				}
				if countOnly {
					s.cpuCount, s.mb = cpu, float64(body)/1e6
				} else {
					s.cpuFull = cpu
				}
			}
			runs[f] = append(runs[f], s)
			if b.cfg.Verbose {
				fmt.Fprintf(b.log, "  %s: %.2f CPU-s count-only, %.2f decoding, %.1f MB body\n", f, s.cpuCount, s.cpuFull, s.mb)
			}
		}
	}
	figures := func(f dorisio.Format, csvMB float64) arrowFigures {
		var cpu, dec, mb []float64
		for _, s := range runs[f] {
			cpu, dec, mb = append(cpu, s.cpuCount), append(dec, (s.cpuFull-s.cpuCount)*1000/s.mb), append(mb, s.mb)
		}
		c := median(cpu)
		return arrowFigures{RowsPerCPUSec: float64(n) / c, CSVMBPerCPUSec: csvMB / c, BodyMB: median(mb), DecodeMsPerMB: median(dec)}
	}
	csv := figures(dorisio.CSV, 0)
	csv = figures(dorisio.CSV, csv.BodyMB)
	res.ArrowCSV, res.ArrowArrow = csv, figures(dorisio.Arrow, csv.BodyMB)
	res.ArrowRows = n
	res.ArrowVsCSV = ratio(res.ArrowArrow.RowsPerCPUSec, res.ArrowCSV.RowsPerCPUSec)
	return nil
}

// arrowPipeline writes rows in format f into a fresh doristest and returns
// the process CPU-seconds it took and the body bytes the BE received.
func arrowPipeline(ctx context.Context, rows []arrowBenchRow, f dorisio.Format, countOnly bool) (float64, int64, error) {
	opts := []doristest.Option{doristest.WithTable(arrowBenchDDL)}
	if countOnly {
		opts = append(opts, doristest.WithCountOnly())
	}
	srv := doristest.NewServer(opts...)
	defer srv.Close()
	p, s := beam.NewPipelineWithRoot()
	cfg := dorisio.Config{FEs: []string{srv.URL}, User: srv.User, Password: srv.Password, Database: "bench", Table: "rows"}
	dorisio.Write(s, cfg, beam.CreateList(s, rows), dorisio.WithFormat(f), dorisio.WithDelivery(dorisio.AtLeastOnce))
	c := processCPU()
	if _, err := beamx.RunWithMetrics(ctx, p); err != nil {
		return 0, 0, fmt.Errorf("the %s write pipeline: %w", f, err)
	}
	return (processCPU() - c).Seconds(), srv.Stats().BackendBodyBytes, nil
}

// printArrow prints arrow_vs_csv, when measured.
func printArrow(w io.Writer, r *Result) {
	if r.ArrowRows == 0 {
		return
	}
	a, c := r.ArrowArrow, r.ArrowCSV
	fmt.Fprintf(w, "%-18s %8.3f %8s  Arrow %.0f rows/CPU-s (%.1f MB of rows/CPU-s, body %.1f MB) / CSV %.0f rows/CPU-s (%.1f MB/CPU-s, body %.1f MB), %d rows; doristest decodes %.0f ms/MB (Arrow) vs %.0f ms/MB (CSV)\n",
		"arrow_vs_csv", r.ArrowVsCSV, "", a.RowsPerCPUSec, a.CSVMBPerCPUSec, a.BodyMB, c.RowsPerCPUSec, c.CSVMBPerCPUSec, c.BodyMB, r.ArrowRows, a.DecodeMsPerMB, c.DecodeMsPerMB)
}
