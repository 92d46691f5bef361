package dorisio

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"reflect"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// A DATETIME holds a wall clock. In a zone that turns its clocks back, the
// wall clocks of the repeated hour name two instants each, and Doris and
// Read take the earlier: an instant of the later pass would read back an
// hour early. Write refuses it, naming the row, instead of moving it.
func TestAnInstantInTheHourAZoneRepeatsFailsInsteadOfMovingAnHour(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	// 2026-11-01: New York's clocks go from 02:00 EDT back to 01:00 EST.
	first := time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC).In(ny)       // 01:30 EDT
	second := time.Date(2026, 11, 1, 6, 30, 0, 0, time.UTC).In(ny)      // 01:30 EST
	const ddl = "demo.z(id BIGINT NOT NULL, at DATETIME(6), `on` DATE)" // on is reserved: back-quoted, as Doris wants
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, ny)

	for _, f := range []Format{CSV, JSON, Arrow} {
		t.Run(string(f), func(t *testing.T) {
			srv := startServer(t, doristest.WithTable(ddl))
			rows := []zoned{{1, first, day}, {2, time.Date(2026, 11, 1, 7, 30, 0, 0, time.UTC).In(ny), day}}
			mustWrite(t, srv, "z", rows, WithFormat(f), WithTimeZone(ny))
			got, _, err := readAll(t, configFor(srv, "z"), Query{}, reflect.TypeOf(zoned{}), WithReadTimeZone(ny))
			if err != nil {
				t.Fatal(err)
			}
			wantSameRows(t, got, rows) // either side of the repeated hour reads back as written

			err = writeAll(t, srv, "z", []zoned{{3, second, day}}, WithFormat(f), WithTimeZone(ny))
			wantErr(t, err, `field zoned.At (column at DATETIME) of element "{ID:3`,
				"2026-11-01T01:30:00-05:00 falls in the hour America/New_York repeats when its clocks go back",
				"the wall clock 2026-11-01 01:30:00 a DATETIME holds reads back as 2026-11-01T01:30:00-04:00, an hour early",
				"WithTimeZone(time.UTC)")
			wantRows(t, srv, "z", [][]string{{"1", "2026-11-01 01:30:00.000000", "2026-11-01"}, {"2", "2026-11-01 02:30:00.000000", "2026-11-01"}})
		})
	}
}

// zonedText is DATETIME text from elsewhere.
type zonedText struct {
	ID int64  `doris:"id"`
	At string `doris:"at"`
}

func init() { beam.RegisterType(reflect.TypeOf(zonedText{})) }

// Text naming a wall clock the Write's zone skips (its clocks go forward)
// is stored as written by CSV and JSON loads, as Doris stores zoneless
// text. An Arrow load carries instants, none of which is that wall clock:
// it fails naming the row, where it stored 01:30 in silence.
func TestTextInTheHourAZoneSkipsIsStoredAsWrittenOrRefusedByArrow(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	// 2026-03-08: New York's clocks go from 02:00 EST to 03:00 EDT.
	in := []zonedText{{1, "2026-03-08 02:30:00"}, {2, "2026-03-08 03:30:00"}}
	const ddl = "demo.zt(id BIGINT NOT NULL, at DATETIME(6))"
	for _, f := range []Format{CSV, JSON} {
		t.Run(string(f), func(t *testing.T) {
			srv := startServer(t, doristest.WithTable(ddl))
			mustWrite(t, srv, "zt", in, WithFormat(f), WithTimeZone(ny))
			wantRows(t, srv, "zt", [][]string{{"1", "2026-03-08 02:30:00.000000"}, {"2", "2026-03-08 03:30:00.000000"}})
		})
	}
	t.Run("arrow", func(t *testing.T) {
		srv := startServer(t, doristest.WithTable(ddl))
		mustWrite(t, srv, "zt", in[1:], WithFormat(Arrow), WithTimeZone(ny))
		err := writeAll(t, srv, "zt", in[:1], WithFormat(Arrow), WithTimeZone(ny))
		wantErr(t, err, "table demo.zt", "row 1: column at: 2026-03-08 02:30:00 is a wall clock America/New_York skips when its clocks go forward",
			"the nearest one would store 2026-03-08 01:30:00",
			"WithFormat(dorisio.CSV)")
		wantRows(t, srv, "zt", [][]string{{"2", "2026-03-08 03:30:00.000000"}})
	})
}

// A stored wall clock the read's zone skips (written in another zone, or
// as text) has no time.Time in that zone: Read fails naming the row and
// column where it returned time.Date's normalization, an hour off, in
// silence; a string field gets the stored text as it is.
func TestReadOfAWallClockTheReadZoneSkipsFailsOrKeepsTheText(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	srv := startServer(t, doristest.WithTable("demo.zt(id BIGINT NOT NULL, at DATETIME(6))"))
	mustWrite(t, srv, "zt", []zonedText{{1, "2026-03-08 02:30:00"}, {2, "2026-03-08 03:30:00"}})

	got, _, err := readAll(t, configFor(srv, "zt"), Query{}, reflect.TypeOf(zonedText{}), WithReadTimeZone(ny))
	if err != nil {
		t.Fatal(err)
	}
	wantSameRows(t, got, []zonedText{{1, "2026-03-08 02:30:00.000000"}, {2, "2026-03-08 03:30:00.000000"}})

	_, _, err = readAll(t, configFor(srv, "zt"), Query{Where: "id = 2"}, reflect.TypeOf(stamped{}), WithReadTimeZone(ny))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = readAll(t, configFor(srv, "zt"), Query{}, reflect.TypeOf(stamped{}), WithReadTimeZone(ny))
	wantErr(t, err, "dorisio.Read", "table demo.zt", "stamped.At", "2026-03-08 02:30:00 is a wall clock America/New_York skips when its clocks go forward",
		"read it into a string field, or with WithReadTimeZone of the zone it was written in")
}
