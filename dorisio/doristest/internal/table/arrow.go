package table

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// Arrow bodies (format arrow, protocol §3): Arrow IPC streams back to
// back, columns matched to the source columns by name (case-insensitive).
// Each value is read as the text a CSV load would carry and converted and
// checked as a CSV value is: timestamps in their field's time zone (the
// load's when it has none), booleans as 1/0, decimals at their scale,
// DATE32 as a date. A column the body lacks is missing, as a JSON key.
func init() { decoders["arrow"] = decodeArrow }

func decodeArrow(sp *Spec, r io.Reader, countOnly bool) (*Batch, error) {
	b := &Batch{seqIdx: -1}
	var rb *rowBuilder
	if !countOnly {
		rb = newRowBuilder(sp, b)
		defer rb.finish()
	}
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		if _, err := br.Peek(1); errors.Is(err, io.EOF) {
			return b, nil
		}
		rd, err := ipc.NewReader(br)
		if err != nil {
			return b, fmt.Errorf("[INTERNAL_ERROR]failed to read arrow stream: %v", err)
		}
		for rd.Next() {
			rec := rd.RecordBatch()
			n := int(rec.NumRows())
			if countOnly {
				b.Total += int64(n)
				b.Loaded += int64(n)
				continue
			}
			idx := make([]int, len(sp.src))
			for i, name := range sp.src {
				idx[i] = -1
				for j, f := range rec.Schema().Fields() {
					if strings.EqualFold(f.Name, name) {
						idx[i] = j
					}
				}
			}
			fields := make([]field, len(sp.src))
			for row := 0; row < n; row++ {
				shown := make([]string, len(idx))
				for i, ci := range idx {
					fields[i] = field{}
					switch {
					case ci < 0:
						fields[i].missing, shown[i] = true, "NULL"
					case rec.Column(ci).IsNull(row):
						fields[i].null, shown[i] = true, "NULL"
					default:
						v, err := arrowText(rec.Column(ci), row, sp.loc)
						if err != nil {
							rd.Release()
							return b, fmt.Errorf("[INTERNAL_ERROR]column %s: %v", rec.Schema().Field(ci).Name, err)
						}
						fields[i].v, shown[i] = v, string(v)
					}
				}
				rb.add(fields, source{text: []byte(strings.Join(shown, ","))})
			}
		}
		err = rd.Err()
		rd.Release()
		if err != nil {
			return b, fmt.Errorf("[INTERNAL_ERROR]failed to read arrow record batch: %v", err)
		}
	}
}

// arrowText is value row of col as the text a CSV load carries.
func arrowText(col arrow.Array, row int, loc *time.Location) ([]byte, error) {
	switch a := col.(type) {
	case *array.Boolean:
		if a.Value(row) {
			return []byte("1"), nil
		}
		return []byte("0"), nil
	case *array.Int8:
		return strconv.AppendInt(nil, int64(a.Value(row)), 10), nil
	case *array.Int16:
		return strconv.AppendInt(nil, int64(a.Value(row)), 10), nil
	case *array.Int32:
		return strconv.AppendInt(nil, int64(a.Value(row)), 10), nil
	case *array.Int64:
		return strconv.AppendInt(nil, a.Value(row), 10), nil
	case *array.Float32:
		return strconv.AppendFloat(nil, float64(a.Value(row)), 'g', -1, 32), nil
	case *array.Float64:
		return strconv.AppendFloat(nil, a.Value(row), 'g', -1, 64), nil
	case *array.Decimal128:
		return []byte(a.Value(row).ToString(a.DataType().(*arrow.Decimal128Type).Scale)), nil
	case *array.Date32:
		return a.Value(row).ToTime().AppendFormat(nil, time.DateOnly), nil
	case *array.Timestamp:
		t := a.DataType().(*arrow.TimestampType)
		zone := loc
		if t.TimeZone != "" {
			z, err := time.LoadLocation(t.TimeZone)
			if err != nil {
				return nil, err
			}
			zone = z
		}
		return a.Value(row).ToTime(t.Unit).In(zone).AppendFormat(nil, "2006-01-02 15:04:05.999999"), nil
	case *array.String:
		return []byte(a.Value(row)), nil
	case *array.LargeString:
		return []byte(a.Value(row)), nil
	case *array.Map, *array.List, *array.Struct:
		return arrowJSON(nil, col, row, loc)
	}
	return nil, fmt.Errorf("doristest does not read arrow type %s", col.DataType())
}

// arrowJSON appends value row of col as JSON: the text a JSON load carries
// for an ARRAY (LIST), MAP or STRUCT column, converted and checked as a
// JSON load's value is. Scalars are their CSV text: numbers and booleans
// bare, everything else a JSON string; a STRUCT's fields are named as its
// Arrow fields are.
func arrowJSON(dst []byte, col arrow.Array, row int, loc *time.Location) ([]byte, error) {
	if col.IsNull(row) {
		return append(dst, "null"...), nil
	}
	var err error
	switch a := col.(type) {
	case *array.Map:
		start, end := a.ValueOffsets(row)
		dst = append(dst, '{')
		for i := start; i < end; i++ {
			if i > start {
				dst = append(dst, ',')
			}
			k, err := arrowText(a.Keys(), int(i), loc)
			if err != nil {
				return dst, err
			}
			dst = jsonQuote(dst, string(k))
			dst = append(dst, ':')
			if dst, err = arrowJSON(dst, a.Items(), int(i), loc); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	case *array.List:
		start, end := a.ValueOffsets(row)
		dst = append(dst, '[')
		for i := start; i < end; i++ {
			if i > start {
				dst = append(dst, ',')
			}
			if dst, err = arrowJSON(dst, a.ListValues(), int(i), loc); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		dst = append(dst, '{')
		for i := 0; i < a.NumField(); i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonQuote(dst, st.Field(i).Name)
			dst = append(dst, ':')
			if dst, err = arrowJSON(dst, a.Field(i), row, loc); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	}
	v, err := arrowText(col, row, loc)
	if err != nil {
		return dst, err
	}
	switch col.(type) {
	case *array.Boolean:
		return append(dst, map[bool]string{true: "true", false: "false"}[string(v) == "1"]...), nil
	case *array.Int8, *array.Int16, *array.Int32, *array.Int64, *array.Decimal128:
		return append(dst, v...), nil
	case *array.Float32, *array.Float64:
		if f, err := strconv.ParseFloat(string(v), 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return append(dst, v...), nil
		}
	}
	return jsonQuote(dst, string(v)), nil
}

// jsonQuote appends s as a JSON string.
func jsonQuote(dst []byte, s string) []byte {
	b, _ := json.Marshal(s)
	return append(dst, b...)
}
