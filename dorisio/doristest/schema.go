package doristest

import (
	"fmt"
	"net/http"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest/internal/table"
)

// Behavior (FE GET /api/{db}/{tbl}/_schema, Doris TableSchemaAction, the
// endpoint the Flink and Spark connectors read):
//   - Auth as the other FE endpoints: no Authorization → 401 envelope;
//     bad credentials → the §2 401 envelope.
//   - Unknown database or table: HTTP 200, {"msg":"Error","code":1,"data":
//     "errCode = 2, detailMessage = Unknown database 'x'" (or table)}.
//   - Else the success envelope whose data is {"status":200,"tableType":
//     "OLAP","keysType":"DUP_KEYS"|"UNIQUE_KEYS"|"AGG_KEYS","properties":
//     [{"name","type","comment","aggregation_type"[,"precision","scale"]}]}:
//     one entry per visible column (no hidden __DORIS_*__ columns), in
//     table order (after ALTER TABLE ... ADD COLUMN too), type the FE's
//     PrimitiveType name (INT, VARCHAR, DECIMAL128, DATETIMEV2, ...),
//     comment the column's, aggregation_type "" for key columns, else
//     NONE, REPLACE (merge-on-read UNIQUE) or the AGGREGATE column's.
//   - Proxy502 and SlowFE faults apply (EndpointSchema).

func (s *Server) feSchema(w http.ResponseWriter, r *http.Request, db, tbl string) {
	if done, _ := s.feFaults(w, r, EndpointSchema, tbl, ""); done {
		return
	}
	if _, ok := s.feAuth(w, r, "Cookie is invalid"); !ok {
		return
	}
	t := s.txns.table(db, tbl)
	if t == nil {
		feEnvelope(w, "Error", 1, jsonString("errCode = 2, detailMessage = "+s.missingTable(db, tbl)))
		return
	}
	sc := t.Schema()
	props := make([]map[string]string, len(sc.Columns))
	for i, c := range sc.Columns {
		p := map[string]string{"name": c.Name, "type": primitiveTypeName(c.Type), "comment": c.Comment, "aggregation_type": aggregationType(sc, c)}
		if c.Type.Kind == table.Decimal {
			p["precision"] = fmt.Sprint(c.Type.Precision)
			p["scale"] = fmt.Sprint(c.Type.Scale)
		}
		props[i] = p
	}
	feEnvelope(w, "success", 0, jsonValue(map[string]any{
		"status": 200, "tableType": "OLAP", "keysType": sc.Keys.String(), "properties": props,
	}))
}

// aggregationType is a column's aggregation as the FE's Column has it: none
// ("") for a key column, NONE for a value column of a DUPLICATE or a
// merge-on-write UNIQUE table, REPLACE for one of a merge-on-read UNIQUE
// table, the declared one in an AGGREGATE table.
func aggregationType(s *table.Schema, c table.Column) string {
	switch {
	case c.Key:
		return ""
	case s.Keys == table.AggKeys:
		return c.Agg.String()
	case s.Keys == table.UniqueKeys && !s.MergeOnWrite:
		return "REPLACE"
	}
	return "NONE"
}

// primitiveTypeName is the FE's PrimitiveType name of t (DECIMAL and
// DATE/DATETIME are the v3/v2 types of current tables).
func primitiveTypeName(t table.Type) string {
	switch t.Kind {
	case table.Decimal:
		switch {
		case t.Precision <= 9:
			return "DECIMAL32"
		case t.Precision <= 18:
			return "DECIMAL64"
		}
		return "DECIMAL128"
	case table.Date:
		return "DATEV2"
	case table.DateTime:
		return "DATETIMEV2"
	}
	return t.Kind.String()
}

// missingTable is Doris' words for a db.tbl the server lacks: the
// database when it is the one missing, else the table.
func (s *Server) missingTable(db, tbl string) string {
	if !s.txns.hasDatabase(db) {
		return fmt.Sprintf("Unknown database '%s'", db)
	}
	return fmt.Sprintf("Unknown table '%s'", tbl)
}
