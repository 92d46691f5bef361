package table

import (
	"strings"
	"testing"
)

func TestAppendValue(t *testing.T) {
	ty := func(k Kind) Type { return Type{Kind: k} }
	dec := Type{Kind: Decimal, Precision: 5, Scale: 2}
	tests := []struct {
		name string
		t    Type
		in   string
		want string // canonical value when ok
		st   convStatus
	}{
		{"tinyint max is accepted", ty(TinyInt), "127", "127", convOK},
		{"tinyint min is accepted", ty(TinyInt), "-128", "-128", convOK},
		{"tinyint above range is bad", ty(TinyInt), "128", "", convBad},
		{"smallint above range is bad", ty(SmallInt), "32768", "", convBad},
		{"int keeps no plus and no leading zeros", ty(Int), "+007", "7", convOK},
		{"int below range is bad", ty(Int), "-2147483649", "", convBad},
		{"int with spaces around is accepted", ty(Int), " 42 ", "42", convOK},
		{"int with a fraction is bad", ty(Int), "1.5", "", convBad},
		{"empty int is bad", ty(Int), "", "", convBad},
		{"bigint max is accepted", ty(BigInt), "9223372036854775807", "9223372036854775807", convOK},
		{"bigint above range is bad", ty(BigInt), "9223372036854775808", "", convBad},
		{"largeint max is accepted", ty(LargeInt), "170141183460469231731687303715884105727", "170141183460469231731687303715884105727", convOK},
		{"largeint min is accepted", ty(LargeInt), "-170141183460469231731687303715884105728", "-170141183460469231731687303715884105728", convOK},
		{"largeint above range is bad", ty(LargeInt), "170141183460469231731687303715884105728", "", convBad},
		{"largeint minus zero is zero", ty(LargeInt), "-000", "0", convOK},
		{"largeint with letters is bad", ty(LargeInt), "12a", "", convBad},
		{"boolean true is 1", ty(Boolean), "TRUE", "1", convOK},
		{"boolean false is 0", ty(Boolean), "false", "0", convOK},
		{"boolean 1 is 1", ty(Boolean), "1", "1", convOK},
		{"boolean 0 is 0", ty(Boolean), "0", "0", convOK},
		{"boolean yes is bad", ty(Boolean), "yes", "", convBad},
		{"boolean 2 is bad", ty(Boolean), "2", "", convBad},
		{"float keeps the shortest form", ty(Float), "1.50", "1.5", convOK},
		{"float beyond range is inf, as fast_float gives", ty(Float), "1e39", "inf", convOK},
		{"infinity in any case is inf", ty(Double), "-Infinity", "-inf", convOK},
		{"a double in plain digits stays plain", ty(Double), "1.23456789e+06", "1234567.89", convOK},
		{"a huge double keeps its exponent", ty(Double), "1e300", "1e+300", convOK},
		{"hex float text is bad", ty(Double), "0x1p-2", "", convBad},
		{"decimal exponent text is read exactly", Type{Kind: Decimal, Precision: 10, Scale: 2}, "1.23456789e+06", "1234567.89", convOK},
		{"decimal tiny exponent text rounds to the scale", Type{Kind: Decimal, Precision: 10, Scale: 5}, "1e-05", "0.00001", convOK},
		{"double with exponent is accepted", ty(Double), "2.5e3", "2500", convOK},
		{"double NaN is nan", ty(Double), "NaN", "nan", convOK},
		{"double text is bad", ty(Double), "abc", "", convBad},
		{"decimal pads the scale", dec, "1", "1.00", convOK},
		{"decimal rounds half up", dec, "1.005", "1.01", convOK},
		{"decimal rounds down below half", dec, "1.004", "1.00", convOK},
		{"decimal negative keeps the sign", dec, "-12.3", "-12.30", convOK},
		{"decimal negative zero loses the sign", dec, "-0.001", "0.00", convOK},
		{"decimal leading dot is accepted", dec, ".5", "0.50", convOK},
		{"decimal max integer digits are accepted", dec, "999.99", "999.99", convOK},
		{"decimal too many integer digits is out of range", dec, "1000", "", convOutRange},
		{"decimal rounding into too many digits is out of range", dec, "999.995", "", convOutRange},
		{"decimal with text is bad", dec, "1.2.3", "", convBad},
		{"decimal scale 0 has no point", Type{Kind: Decimal, Precision: 3}, "12.5", "13", convOK},
		{"char within length is kept as is", Type{Kind: Char, Length: 3}, "abc", "abc", convOK},
		{"char over length is too long", Type{Kind: Char, Length: 3}, "abcd", "", convTooLong},
		{"varchar counts bytes: two 3-byte runes fit 6", Type{Kind: Varchar, Length: 6}, "中文", "中文", convOK},
		{"varchar counts bytes: two 3-byte runes exceed 5", Type{Kind: Varchar, Length: 5}, "中文", "", convTooLong},
		{"varchar keeps spaces", Type{Kind: Varchar, Length: 6}, " a b ", " a b ", convOK},
		{"string has no length limit", ty(String), strings.Repeat("x", 70000), strings.Repeat("x", 70000), convOK},
		{"date is accepted", ty(Date), "2024-02-29", "2024-02-29", convOK},
		{"date without zero padding is accepted", ty(Date), "2024-2-9", "2024-02-09", convOK},
		{"date compact form is accepted", ty(Date), "20240131", "2024-01-31", convOK},
		{"date with slashes is accepted", ty(Date), "2024/01/31", "2024-01-31", convOK},
		{"date drops a time part", ty(Date), "2024-01-31 10:11:12", "2024-01-31", convOK},
		{"date Feb 29 in a non leap year is bad", ty(Date), "2023-02-29", "", convBad},
		{"date month 13 is bad", ty(Date), "2023-13-01", "", convBad},
		{"date text is bad", ty(Date), "yesterday", "", convBad},
		{"date with mixed separators is bad", ty(Date), "2024-01/02", "", convBad},
		{"datetime is accepted", ty(DateTime), "2024-01-31 23:59:59", "2024-01-31 23:59:59", convOK},
		{"datetime with T is accepted", ty(DateTime), "2024-01-31T01:02:03", "2024-01-31 01:02:03", convOK},
		{"datetime from a date is midnight", ty(DateTime), "2024-01-31", "2024-01-31 00:00:00", convOK},
		{"datetime rounds the fraction at scale 0", ty(DateTime), "2024-01-31 01:02:03.5", "2024-01-31 01:02:04", convOK},
		{"datetime rounds a fraction below half down", ty(DateTime), "2024-01-31 01:02:03.499999999", "2024-01-31 01:02:03", convOK},
		{"datetime(3) rounds half up", Type{Kind: DateTime, Scale: 3}, "2024-01-31 01:02:03.1235", "2024-01-31 01:02:03.124", convOK},
		{"datetime(3) rounding carries into the next year", Type{Kind: DateTime, Scale: 3}, "2024-12-31 23:59:59.9996", "2025-01-01 00:00:00.000", convOK},
		{"datetime(3) rounding past 9999 is bad", Type{Kind: DateTime, Scale: 3}, "9999-12-31 23:59:59.9999", "", convBad},
		{"datetime(2) rounding carries into Feb 29", Type{Kind: DateTime, Scale: 2}, "2024-02-28 23:59:59.995", "2024-02-29 00:00:00.00", convOK},
		{"datetime(6) rounds a seventh digit", Type{Kind: DateTime, Scale: 6}, "2024-01-31 01:02:03.1234565", "2024-01-31 01:02:03.123457", convOK},
		{"datetime(6) does not carry a seventh digit into the second", Type{Kind: DateTime, Scale: 6}, "2024-01-31 01:02:03.9999995", "", convBad},
		{"datetime(3) pads the fraction", Type{Kind: DateTime, Scale: 3}, "2024-01-31 01:02:03.5", "2024-01-31 01:02:03.500", convOK},
		{"datetime(6) keeps microseconds", Type{Kind: DateTime, Scale: 6}, "2024-01-31 01:02:03.123456", "2024-01-31 01:02:03.123456", convOK},
		{"datetime hour 24 is bad", ty(DateTime), "2024-01-31 24:00:00", "", convBad},
		{"datetime without seconds is on the minute", ty(DateTime), "2024-01-31 10:00", "2024-01-31 10:00:00", convOK},
		{"datetime as fourteen digits", ty(DateTime), "20240131100203", "2024-01-31 10:02:03", convOK},
		{"a date of fourteen digits keeps the day", ty(Date), "20240131000000", "2024-01-31", convOK},
		{"datetime minutes then garbage is bad", ty(DateTime), "2024-01-31 10:00x", "", convBad},
		{"datetime with trailing text is bad", ty(DateTime), "2024-01-31 10:00:00 x", "", convBad},
		{"a Z suffix is converted to the default load zone +08:00", ty(DateTime), "2024-01-31T10:00:00Z", "2024-01-31 18:00:00", convOK},
		{"an offset suffix is converted", ty(DateTime), "2024-01-01 08:00:00+08:00", "2024-01-01 08:00:00", convOK},
		{"an offset without colon is converted", ty(DateTime), "2024-01-01 00:00:00-0500", "2024-01-01 13:00:00", convOK},
		{"a converted time beyond 9999 is bad", ty(DateTime), "9999-12-31 23:00:00-05:00", "", convBad},
		{"an array of ints", Type{Kind: Array, Elems: []Type{ty(Int)}}, "[1, 2,null]", "[1,2,null]", convOK},
		{"an array element of the wrong type is null", Type{Kind: Array, Elems: []Type{ty(Int)}}, `[1,"x"]`, "[1,null]", convOK},
		{"an array of strings", Type{Kind: Array, Elems: []Type{{Kind: String}}}, `["a\"b","c,d"]`, `["a\"b","c,d"]`, convOK},
		{"a map sorts its keys", Type{Kind: Map, Elems: []Type{{Kind: String}, ty(BigInt)}}, `{"z":1,"a":2}`, `{"a":2,"z":1}`, convOK},
		{"a struct in declared order", Type{Kind: Struct, Fields: []string{"k", "n"}, Elems: []Type{{Kind: String}, ty(Int)}}, `{"n":3,"k":"v"}`, `{"k":"v","n":3}`, convOK},
		{"json is compacted", Type{Kind: JSON}, "{ \"b\" : [1, 2.50], \"a\": true }", `{"a":true,"b":[1,2.50]}`, convOK},
		{"json that does not parse is bad", Type{Kind: JSON}, "{", "", convBad},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, st := appendValue([]byte("prefix:"), tt.t, []byte(tt.in))
			if st != tt.st {
				t.Fatalf("status = %d, want %d (value %q)", st, tt.st, got)
			}
			want := "prefix:" + tt.want
			if string(got) != want {
				t.Errorf("value = %q, want %q", got, want)
			}
		})
	}
}

func TestCompareCanon(t *testing.T) {
	tests := []struct {
		name string
		k    Kind
		a, b string
		want int
	}{
		{"smaller positive ints", BigInt, "9", "10", -1},
		{"negative below positive", Int, "-1", "0", -1},
		{"more negative is smaller", Int, "-10", "-9", -1},
		{"equal decimals", Decimal, "1.50", "1.50", 0},
		{"decimals by integer length", Decimal, "10.00", "9.99", 1},
		{"largeints", LargeInt, "170141183460469231731687303715884105727", "-1", 1},
		{"doubles", Double, "1e3", "999", 1},
		{"datetimes as text", DateTime, "2024-01-01 00:00:00", "2023-12-31 23:59:59", 1},
		{"strings bytewise", Varchar, "b", "a", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := compareCanon(tt.k, []byte(tt.a), []byte(tt.b)); got != tt.want {
				t.Errorf("compareCanon(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
			}
		})
	}
}
