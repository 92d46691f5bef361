package flightread

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// Split is one query of a read: a few tablets of one BE, read by one
// Flight SQL statement (§14.3). Small: it is what the Reshuffle moves.
type Split struct {
	Index, Of int     // 1-based, for messages
	Tablets   []int64 // the tablets it reads
	SQL       string  // SELECT ... FROM `db`.`tbl` TABLET(...) [WHERE ...] [LIMIT n]
	BE        string  // the BE (host:be_port) the plan placed the tablets on, for messages
	FE        string  // host:port of the FE's Flight SQL service
	Table     string  // db.tbl, for messages
	Columns   []Column
}

// describe names the split in errors: "split 2 of 4 (tablets 10005,
// 10006; BE host:9060)".
func (sp Split) describe() string {
	ids := make([]string, len(sp.Tablets))
	for i, t := range sp.Tablets {
		ids[i] = strconv.FormatInt(t, 10)
	}
	if len(ids) > 8 {
		ids = append(ids[:8], fmt.Sprintf("... %d in all", len(sp.Tablets)))
	}
	return fmt.Sprintf("split %d of %d (tablets %s; BE %s)", sp.Index, sp.Of, strings.Join(ids, ","), sp.BE)
}

// quote back-quotes a Doris identifier.
func quote(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// selectSQL is the statement of a read: the columns of db.tbl, in the
// given tablets (nil: the plan's statement, without TABLET), filtered by
// where, at most limit rows (0: all). The comment names the reader in
// Doris' audit log, as the connectors' ApplicationName does. A split's
// statement turns Doris' point-query short circuit off: 4.0.x answers a
// short-circuited query over Flight with no endpoint (apache/doris#67368,
// §14.9).
func selectSQL(db, tbl string, cols []Column, tablets []int64, where string, limit int64) string {
	var b strings.Builder
	b.WriteString("/* ApplicationName=dorisio */ SELECT ")
	if tablets != nil {
		b.WriteString("/*+ SET_VAR(enable_short_circuit_query=false) */ ")
	}
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(quote(c.Name))
	}
	b.WriteString(" FROM " + quote(db) + "." + quote(tbl))
	if tablets != nil {
		b.WriteString(" TABLET(")
		for i, t := range tablets {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatInt(t, 10))
		}
		b.WriteByte(')')
	}
	if where != "" { // its own line, in parentheses: a `--` comment at its end or an OR cannot take what follows
		b.WriteString(" WHERE (" + where + "\n)")
	}
	if limit > 0 {
		b.WriteString(" LIMIT " + strconv.FormatInt(limit, 10))
	}
	return b.String()
}

// group places each tablet on the routing BE holding the fewest tablets
// so far (as the Flink and Spark connectors do), then cuts each BE's
// tablets into splits of at most per tablets. It returns the BEs'
// tablets in order (BE, then tablet id), each split's tablets and BE.
func group(tablets []streamload.TabletRouting, per int) (splits [][]int64, bes []string) {
	byBE := map[string][]int64{}
	var order []string
	for _, t := range tablets {
		best := ""
		for _, r := range t.Routings {
			if _, seen := byBE[r]; !seen {
				byBE[r] = nil
				order = append(order, r)
			}
			if best == "" || len(byBE[r]) < len(byBE[best]) {
				best = r
			}
		}
		if best == "" {
			best = "(no BE listed)"
			if _, seen := byBE[best]; !seen {
				order = append(order, best)
			}
		}
		byBE[best] = append(byBE[best], t.Tablet)
	}
	slices.Sort(order)
	for _, be := range order {
		ids := byBE[be]
		for len(ids) > 0 {
			n := min(per, len(ids))
			splits, bes = append(splits, ids[:n:n]), append(bes, be)
			ids = ids[n:]
		}
	}
	return splits, bes
}

var splitType = reflect.TypeOf(Split{})
