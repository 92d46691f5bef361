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
//   - doristest's decode time per MB of body: the same rows as one body of
//     each format, built here (CSV as Write quotes it; Arrow with the types
//     Write gives these columns), PUT into a doristest that decodes and
//     checks every value; its answer's ReadDataTimeMs (receive and parse)
//     per MB of that body.
//
// doristest's decoders are not Doris': a real BE converts Arrow columns to
// its blocks without parsing text (Doris' docs: about 10× cheaper than CSV),
// while doristest renders Arrow values as text and checks them as CSV.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
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
	fmt.Fprintf(b.log, "arrow runs: %d × (CSV, Arrow) of %d rows into a count-only doristest, then each body decoded by doristest\n", b.cfg.Runs, n)
	type sample struct{ cpu, mb float64 }
	runs := map[dorisio.Format][]sample{}
	for i := 0; i < b.cfg.Runs; i++ {
		for _, f := range []dorisio.Format{dorisio.CSV, dorisio.Arrow} {
			cpu, body, err := arrowPipeline(ctx, rows, f)
			if err != nil {
				return err
			}
			runs[f] = append(runs[f], sample{cpu, float64(body) / 1e6})
			if b.cfg.Verbose {
				fmt.Fprintf(b.log, "  %s: %.2f CPU-s, %.1f MB body\n", f, cpu, float64(body)/1e6)
			}
		}
	}
	figures := func(f dorisio.Format, csvMB float64) arrowFigures {
		var cpu, mb []float64
		for _, s := range runs[f] {
			cpu, mb = append(cpu, s.cpu), append(mb, s.mb)
		}
		c := median(cpu)
		return arrowFigures{RowsPerCPUSec: float64(n) / c, CSVMBPerCPUSec: csvMB / c, BodyMB: median(mb)}
	}
	csv := figures(dorisio.CSV, 0)
	csv = figures(dorisio.CSV, csv.BodyMB)
	res.ArrowCSV, res.ArrowArrow = csv, figures(dorisio.Arrow, csv.BodyMB)
	csvBody, arrowBody, err := benchBodies(rows)
	if err != nil {
		return err
	}
	if res.ArrowCSV.DecodeMsPerMB, err = decodeMsPerMB(ctx, csvBody, map[string]string{"column_separator": ",", "enclose": `"`, "escape": `\`, "trim_double_quotes": "true"}, b.cfg.Runs); err != nil {
		return err
	}
	if res.ArrowArrow.DecodeMsPerMB, err = decodeMsPerMB(ctx, arrowBody, map[string]string{"format": "arrow"}, b.cfg.Runs); err != nil {
		return err
	}
	res.ArrowRows = n
	res.ArrowVsCSV = ratio(res.ArrowArrow.RowsPerCPUSec, res.ArrowCSV.RowsPerCPUSec)
	return nil
}

// arrowPipeline writes rows in format f into a fresh doristest and returns
// the process CPU-seconds it took and the body bytes the BE received.
func arrowPipeline(ctx context.Context, rows []arrowBenchRow, f dorisio.Format) (float64, int64, error) {
	srv := doristest.NewServer(doristest.WithTable(arrowBenchDDL), doristest.WithCountOnly())
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

// benchBodies are rows as one CSV body (quoted as Write quotes it) and one
// Arrow stream (the types Write gives these columns).
func benchBodies(rows []arrowBenchRow) ([]byte, []byte, error) {
	var csv bytes.Buffer
	for _, r := range rows {
		fmt.Fprintf(&csv, "%d,%d,%s,%s,%s,%q\n", r.ID, map[bool]int{true: 1}[r.Flag], r.Price, strconv.FormatFloat(r.F, 'g', -1, 64),
			r.At.Format("2006-01-02 15:04:05.999999"), r.Name)
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "flag", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "price", Type: &arrow.Decimal128Type{Precision: 12, Scale: 3}}, {Name: "f", Type: arrow.PrimitiveTypes.Float64},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}}, {Name: "name", Type: arrow.BinaryTypes.String},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.ID)
		b.Field(1).(*array.BooleanBuilder).Append(r.Flag)
		d, err := decimal128.FromString(string(r.Price), 12, 3)
		if err != nil {
			return nil, nil, err
		}
		b.Field(2).(*array.Decimal128Builder).Append(d)
		b.Field(3).(*array.Float64Builder).Append(r.F)
		b.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(r.At.UnixMicro()))
		b.Field(5).(*array.StringBuilder).Append(r.Name)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var out bytes.Buffer
	w := ipc.NewWriter(&out, ipc.WithSchema(schema))
	if err := w.Write(rec); err != nil {
		return nil, nil, err
	}
	if err := w.Close(); err != nil {
		return nil, nil, err
	}
	return csv.Bytes(), out.Bytes(), nil
}

// decodeMsPerMB PUTs body runs times into a decoding doristest and returns
// the median of its answers' ReadDataTimeMs per MB.
func decodeMsPerMB(ctx context.Context, body []byte, headers map[string]string, runs int) (float64, error) {
	var ms []float64
	for range runs {
		srv := doristest.NewServer(doristest.WithTable(arrowBenchDDL))
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL+"/api/bench/rows/_stream_load", bytes.NewReader(body))
		if err != nil {
			srv.Close()
			return 0, err
		}
		req.SetBasicAuth(srv.User, srv.Password)
		req.Header.Set("Expect", "100-continue")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req) // follows the FE's 307 to a BE
		if err != nil {
			srv.Close()
			return 0, err
		}
		var answer struct {
			Status           string
			Message          string
			NumberLoadedRows int64
			ReadDataTimeMs   int64
		}
		err = json.NewDecoder(resp.Body).Decode(&answer)
		resp.Body.Close()
		srv.Close()
		if err != nil || answer.Status != "Success" {
			return 0, fmt.Errorf("decoding a %s body: %s %s (%v)", headers["format"], answer.Status, answer.Message, err)
		}
		ms = append(ms, float64(answer.ReadDataTimeMs)/(float64(len(body))/1e6))
	}
	return median(ms), nil
}
