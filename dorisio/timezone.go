package dorisio

import (
	"fmt"
	"time"
)

// WithTimeZone sets the time zone that time.Time fields are written in
// (default UTC): every instant is converted to it, so the same instant gives
// the same DATETIME whatever zone the value carried (not inside a JSON or
// VARIANT column, which holds encoding/json's RFC 3339 text, each time in
// its own zone). It is sent as the
// load's "timezone" header (Stream Load's timezone, which Doris also uses to
// convert DATETIME text with a zone suffix such as "+08:00", and for time
// functions in the load). loc must be time.UTC, a zone loaded by name with
// time.LoadLocation ("Asia/Shanghai"; workers need the time zone database:
// import _ "time/tzdata" when their image lacks it), or a
// time.FixedZone whose offset is whole minutes. For pre-encoded elements it
// only sets the header.
func WithTimeZone(loc *time.Location) LoadOption {
	return forLoads(fmt.Sprintf("WithTimeZone(%v)", loc), func(o *writeOptions) {
		o.claim("header timezone")
		name, err := zoneName(loc)
		if err != nil {
			o.fail("WithTimeZone(%v): %v", loc, err)
			return
		}
		o.TimeZone, o.TimeZoneSet = name, true
	})
}

// zoneName is the name a worker can load loc by, and Doris' timezone header
// accepts: an IANA name, "UTC", or an offset "+08:00".
func zoneName(loc *time.Location) (string, error) {
	switch {
	case loc == nil:
		return "", fmt.Errorf("nil location")
	case loc == time.UTC:
		return "UTC", nil
	case loc.String() == "Local":
		return "", fmt.Errorf("time.Local differs from machine to machine; name the zone (time.LoadLocation(\"Europe/Paris\")) or use time.UTC")
	}
	if l, err := time.LoadLocation(loc.String()); err == nil && sameOffsets(l, loc) {
		return loc.String(), nil
	}
	// A fixed zone: one offset at every instant.
	_, off := time.Date(2000, 1, 1, 0, 0, 0, 0, loc).Zone()
	_, off2 := time.Date(2000, 7, 1, 0, 0, 0, 0, loc).Zone()
	if off != off2 || off%60 != 0 {
		return "", fmt.Errorf("zone %q is neither a time zone database name nor a fixed offset in whole minutes", loc)
	}
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("%c%02d:%02d", sign, off/3600, off/60%60), nil
}

// sameOffsets reports whether two locations agree on a few instants (a
// FixedZone may carry a database name it does not follow).
func sameOffsets(a, b *time.Location) bool {
	for _, m := range []time.Month{time.January, time.July} {
		t := time.Date(2021, m, 1, 0, 0, 0, 0, time.UTC)
		_, x := t.In(a).Zone()
		_, y := t.In(b).Zone()
		if x != y {
			return false
		}
	}
	return true
}
