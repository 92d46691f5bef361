package flightread

import (
	"math/rand"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// A DATETIME read into a time.Time is the same value (==, location
// included) whichever path decodes it: the UTC one (session zone UTC or
// none, read zone UTC), which sets the instant as it comes, and the
// general one, time.Date of the stored wall clock in the read's zone.
// Session zones UTC, "", Etc/UTC, +00:00, Asia/Shanghai, +08:00; read
// zones UTC, Asia/Shanghai, +08:00; instants from 1900 to 2200 at every
// unit.
func TestADatetimeReadsTheSameOnTheUTCPathAndTheGeneralOne(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Skip("no time zone database here")
	}
	etc, err := time.LoadLocation("Etc/UTC")
	if err != nil {
		t.Skip("no time zone database here")
	}
	sessions := map[string]*time.Location{"UTC": time.UTC, "": time.UTC, "Etc/UTC": etc, "+00:00": time.FixedZone("+00:00", 0),
		"Asia/Shanghai": shanghai, "+08:00": time.FixedZone("+08:00", 8*3600)}
	reads := []*time.Location{time.UTC, shanghai, time.FixedZone("+08:00", 8*3600)}
	r := rand.New(rand.NewSource(19))
	for _, unit := range []arrow.TimeUnit{arrow.Second, arrow.Millisecond, arrow.Microsecond, arrow.Nanosecond} {
		var instants []time.Time
		for range 2000 {
			sec := r.Int63n(int64(300*365.25*86400)) - 70*365*86400 // 1900..2200
			instants = append(instants, time.Unix(sec, r.Int63n(1e9)).Truncate(unit.Multiplier()))
		}
		for tz, session := range sessions {
			at := &arrow.TimestampType{Unit: unit, TimeZone: tz}
			rec := batch(t, "at", at, func(b array.Builder) {
				for _, in := range instants {
					ts, err := arrow.TimestampFromTime(in, unit)
					if err != nil {
						t.Fatal(err)
					}
					b.(*array.TimestampBuilder).Append(ts)
				}
			})
			for _, loc := range reads {
				got, err := decodeInto[textTimes](t, "DATETIME", rec, loc)
				if err != nil {
					t.Fatalf("session %q, read zone %s, %s: %v", tz, loc, unit, err)
				}
				bad := 0
				for i, in := range instants {
					w := in.In(session) // Doris' wall clock
					want := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), loc)
					if got[i].At != want {
						if bad++; bad <= 3 {
							t.Errorf("session %q, read zone %s, %s: %#v read as %#v, want %#v", tz, loc, unit, in, got[i].At, want)
						}
					}
				}
			}
		}
	}
}
