package encode

import (
	"context"
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// The checks themselves, value by value: each accepted form is one every
// Doris version reads as the same value; each refused one is not.
func TestColumnTypeChecks(t *testing.T) {
	col := func(typ string, prec, scale int) colType {
		c := streamload.Column{Name: "c", Type: typ}
		b := []byte(`{"name":"c","type":"` + typ + `","precision":"` + strconv.Itoa(prec) + `","scale":"` + strconv.Itoa(scale) + `"}`)
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		return parseColType(c)
	}
	tests := []struct {
		col  colType
		val  any
		want string // "" = lands as given
	}{
		{col("TINYINT", 0, 0), int8(-128), ""},
		{col("SMALLINT", 0, 0), int32(32768), "32768 is outside SMALLINT's range -32768..32767"},
		{col("INT", 0, 0), uint32(1 << 31), "2147483648 is outside INT's range"},
		{col("LARGEINT", 0, 0), uint64(math.MaxUint64), ""},
		{col("LARGEINT", 0, 0), "170141183460469231731687303715884105728", "is outside LARGEINT's range"},
		{col("BIGINT", 0, 0), 9.223372036854775807e18, "is outside BIGINT's range"},
		{col("BIGINT", 0, 0), -9.223372036854775808e18, ""},
		{col("INT", 0, 0), "12.000", `"12.000" has a decimal point, which an INT column reads by version and strict mode`},
		{col("LARGEINT", 0, 0), Decimal("12.0"), "12.0 has a decimal point"},
		{col("INT", 0, 0), " 12 ", ""},
		{col("INT", 0, 0), "\n12\t", ""},
		{col("INT", 0, 0), "12\u00a0", `"12\u00a0" is not a whole number`},
		{col("DECIMAL64", 10, 2), "\u00a01.5", "is not plain decimal text"},
		{col("DATEV2", 0, 0), "2024-01-02\u00a0", "is not a DATE Doris reads"},
		{col("BOOLEAN", 0, 0), "true\u00a0", "is not a BOOLEAN"},
		{col("DOUBLE", 0, 0), "\u00a01.5", "is not a number a DOUBLE column reads"},
		{col("INT", 0, 0), "12.5", "is not a whole number"},
		{col("INT", 0, 0), "1e3", "is not a whole number"},
		{col("INT", 0, 0), Decimal("7.10"), "is not a whole number"},
		{col("BOOLEAN", 0, 0), 2, "2 is not a BOOLEAN: want 0 or 1"},
		{col("BOOLEAN", 0, 0), " FALSE ", ""},
		{col("FLOAT", 0, 0), 1e39, "is beyond FLOAT's range"},
		{col("FLOAT", 0, 0), float32(3.4e38), ""},
		{col("DOUBLE", 0, 0), "0x1p-2", "is not a number a DOUBLE column reads"},
		{col("DOUBLE", 0, 0), " -1.5e300 ", ""},
		{col("DOUBLE", 0, 0), "nan", ""},
		{col("DECIMAL64", 10, 2), 12345678.994, ""},
		{col("DECIMAL64", 10, 2), 99999999.995, "has 9 integer digits"},
		{col("DECIMAL32", 3, 3), "0.9994", ""},
		{col("DECIMAL32", 3, 3), "0.9995", "has 1 integer digits"},
		{col("DECIMALV2", 27, 9), new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil), "has 19 integer digits"},
		{col("DECIMAL128", 38, 0), "1.5e3", "is not plain decimal text"},
		{col("DATEV2", 0, 0), "2024/1/2", ""},
		{col("DATEV2", 0, 0), "20240229", ""},
		{col("DATEV2", 0, 0), 20230229, "is not a valid date"},
		{col("DATEV2", 0, 0), 2024, "is not a date as a number (YYYYMMDD)"},
		{col("DATEV2", 0, 0), "2024-01-02 00:00:00.000", ""},
		{col("DATEV2", 0, 0), "2024-01-02T10:00:00", "has a time of day"},
		{col("DATEV2", 0, 0), "2 Jan 2024", "is not a DATE Doris reads on every version"},
		{col("DATETIMEV2", 0, 0), "2024-01-02T10:00:00.123456+08:00", ""},
		{col("DATETIMEV2", 0, 0), "20240102235959", ""},
		{col("DATETIMEV2", 0, 0), "2024-01-02 24:00:00", "is not a valid date or time"},
		{col("DATETIMEV2", 0, 0), int64(20240102235959), ""},
		{col("DATEV2", 0, 0), "2024-1-2", ""},
		{col("DATEV2", 0, 0), "2024-01-02x", "is not a DATE Doris reads on every version"},
		{col("DATETIMEV2", 0, 0), "2024-01-02T10:00", ""},
		{col("DATETIMEV2", 0, 0), "2024-01-02 10:00:00 PST", "is not a DATETIME Doris reads on every version"},
		{col("DATEV2", 0, 0), time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), ""},
		{col("DATEV2", 0, 0), time.Date(2024, 1, 2, 0, 0, 0, 500, time.UTC), ""}, // below Doris' microseconds: written as midnight
		{col("DATEV2", 0, 0), time.Date(2024, 1, 2, 0, 0, 0, 5000, time.UTC), "2024-01-02 00:00:00.000005 has a time of day"},
		{col("DATETIMEV2", 0, 0), time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), ""},
		{col("INT", 0, 0), time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), "a time.Time cannot be loaded into an INT column"},
		{col("DATEV2", 0, 0), 1.5, "a float64 cannot be loaded into a DATE column"},
		{col("BOOLEAN", 0, 0), Decimal("1"), "a dorisio.Decimal cannot be loaded into a BOOLEAN column"},
		{col("INT", 0, 0), []int{1}, "a []int cannot be loaded into an INT column"},
		{col("VARCHAR", 0, 0), 300, ""},
		{col("JSON", 0, 0), 1.5, ""},
	}
	for _, f := range []Format{CSV, JSONLines} {
		for _, tc := range tests {
			v := reflect.ValueOf(tc.val)
			check, err := checkFor(v.Type(), f, tc.col, time.UTC)
			if err == nil && check != nil {
				enc, encErr := valueEncoder(v.Type(), valueCtx{format: f, loc: time.UTC})
				if encErr != nil {
					t.Fatal(encErr)
				}
				text, encErr := enc(nil, v)
				if encErr != nil {
					t.Fatal(encErr)
				}
				err = check(v, text)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%s: %T %v into %s: refused: %v", f.Headers()["format"], tc.val, tc.val, tc.col.name, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("%s: %T %v into %s: err = %v, want it to contain %q", f.Headers()["format"], tc.val, tc.val, tc.col.name, err, tc.want)
			}
		}
	}
}

// A struct with no type name (anonymous, or one Beam rebuilt because it was
// not registered) is named by its literal, not "field .F".
func TestAFieldOfAnUnnamedStructIsNamedByItsType(t *testing.T) {
	v := struct {
		F float64 `doris:"f"`
	}{math.NaN()}
	enc, err := NewStruct(reflect.TypeOf(v), CSV, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, err = enc.Encode(context.Background(), v)
	if err == nil || !strings.Contains(err.Error(), "field struct { F float64 \"doris:\\\"f\\\"\" }.F (column f)") {
		t.Errorf("err = %v", err)
	}
}

// A DATE takes the first instant of a day that has no 00:00 (Santiago's
// clocks jump from 24:00 to 01:00 on 2024-09-08), written in that zone;
// 01:00 on any other day keeps its time of day and is refused.
func TestADateTakesTheFirstInstantOfADayWithoutMidnight(t *testing.T) {
	loc, err := time.LoadLocation("America/Santiago")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	date := parseColType(streamload.Column{Name: "on", Type: "DATEV2"})
	for _, tc := range []struct {
		tm   time.Time
		want string
	}{
		{time.Date(2024, 9, 8, 1, 0, 0, 0, loc), ""},
		{time.Date(2024, 9, 8, 1, 0, 0, 0, loc).UTC(), ""}, // the same instant, written in loc
		{time.Date(2024, 9, 9, 1, 0, 0, 0, loc), "2024-09-09 01:00:00 has a time of day"},
		{time.Date(2024, 9, 8, 1, 0, 0, 1000, loc), "2024-09-08 01:00:00.000001 has a time of day"},
	} {
		v := reflect.ValueOf(tc.tm)
		check, err := checkFor(v.Type(), CSV, date, loc)
		if err != nil || check == nil {
			t.Fatalf("checkFor: %v, %v", check, err)
		}
		enc, err := valueEncoder(v.Type(), valueCtx{format: CSV, loc: loc})
		if err != nil {
			t.Fatal(err)
		}
		text, err := enc(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		err = check(v, text)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v into DATE: err = %v, want %q", tc.tm, err, tc.want)
		}
	}
}
