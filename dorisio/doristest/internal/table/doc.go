// Package table is the data layer of doristest: table schemas (ParseDDL), Stream Load
// header options (NewSpec), parsing of CSV and JSON bodies against a schema (Spec.Parse)
// and compact storage of committed rows (Table).
//
// # Flow
//
//	s, _ := table.ParseDDL("demo.t(id BIGINT NOT NULL, name VARCHAR(32)) UNIQUE KEY(id)")
//	sp, err := table.NewSpec(s, req.Header) // *HeaderError: answer Fail before reading the body
//	b, _ := sp.Parse(body, false)            // counters, error log, rows
//	if sp.TooManyFiltered(b) { /* [DATA_QUALITY_ERROR]too many filtered rows */ }
//	t.Apply(b)                               // when the transaction becomes VISIBLE
//
// # Rows
//
// A source row goes through these steps, in the order the BE runs them
// (docs/protocol.md §3, §4, §7):
//
//  1. The reader. CSV: the field count must equal the source columns (the `columns`
//     header, else the table columns plus `hidden_columns`), and the line must be UTF-8,
//     else the row is filtered. Empty lines are skipped and not counted; skip_lines (and
//     the header lines of csv_with_names[_and_types]) are not counted either. `\N` is
//     NULL. JSON: a document that does not parse, or lacks a key of a NOT NULL column.
//  2. The conversion, column by column: a value that is not a value of its column's type
//     becomes NULL, or filters the row when strict_mode is true; NULL in a NOT NULL
//     column filters the row (so a non-strict bad value into a NOT NULL column does too).
//  3. The delete sign is computed (`__DORIS_DELETE_SIGN__` = 1, merge_type DELETE, or the
//     `delete` condition with MERGE).
//  4. `where`: rows for which it is not true are Unselected.
//  5. The table sink's checks, which filter the row whatever strict_mode says: a
//     CHAR/VARCHAR longer than its length in bytes, a decimal with more integer digits
//     than precision-scale.
//
// Filtered rows are kept as Rejection (reason, row) and logged as
// "Reason: <reason>. src line [<row>]; ", at most 51 lines, block by block in the BE's
// order, each stage showing the row as the BE does: the reader the line as read, the
// conversion the source values joined by a space (NULL as "NULL"), the sink nothing
// (errlog.go).
//
// JSON bodies are read one document per line when read_json_by_line is true, which is
// its default unless strip_outer_array is given (master, §3); JSONByLine tells the BE.
//
// Values are stored canonically: integers without sign or leading zeros, decimals with
// exactly scale digits (extra digits rounded half-up; exponent text accepted),
// FLOAT/DOUBLE in shortest form (plain digits for exponents -4..15, else 1e+300; nan,
// inf, -inf), BOOLEAN 1/0 (from true/false/1/0; JSON true/false are read as 1/0 for
// every column, as the JSON reader does), DATE 2006-01-02, DATETIME 2006-01-02
// 15:04:05 (plus n fraction digits for DATETIME(n); zone-suffixed text converted to
// the load's timezone, default +08:00), strings as given (unescaped when `escape` is
// set; a '"' enclose kept before 4.0 without trim_double_quotes), complex types as
// compact JSON. A CSV line that is not UTF-8, or a JSON document, is filtered.
//
// # Tables
//
// ParseDDL and StrictDDL read Doris' CREATE TABLE (ddl.go: columns, key model,
// distribution, partitions, PROPERTIES) into a Schema, with Doris' checks and
// error texts; ParseStatement reads the DDL the SQL endpoint runs, and
// Table.AddColumns plays ALTER TABLE ... ADD COLUMN (alter.go).
//
// # Unique and aggregate key tables
//
// One row per key. A later row replaces the stored one; with a sequence column (the
// function_column.sequence_col property, or the header with a sequence_type table) a
// row whose sequence value is lower than the stored one's is ignored (equal: the later
// row wins). A delete removes the key (kept as a tombstone holding its sequence value).
// partial_columns (or unique_key_update_mode UPDATE_FIXED_COLUMNS) updates only the
// listed columns; the others keep their stored values, or take their default, NULL
// or zero (NOT NULL columns) for a new key. An AGGREGATE KEY table merges a row into
// the stored one of its key column by column (aggregate.go).
//
// # Where this differs from real Doris
//
//   - `columns` takes plain names only; names that are not table columns are read and
//     dropped. Expressions (`v=tmp+1`) are refused with a "doristest does not support"
//     HeaderError. Columns not listed take their DEFAULT, else NULL; a NOT NULL column
//     without default left out is refused.
//   - The function_column.sequence_col header (a sequence_type table) must name a table
//     column, whose values order rows as its own type (Doris also takes a source column
//     of `columns` and casts it to the sequence type).
//   - `where` and `delete` support only `col <op> literal` (or `col % n <op> literal`) with AND, OR, NOT, parentheses
//     and IS [NOT] NULL; no functions, no IN, no column-to-column comparisons.
//   - Value parsing is narrower than the BE's casts: integers must be plain digits (no
//     "1.0"), BOOLEAN takes only true/false/1/0, dates accept YYYY-MM-DD, YYYY/MM/DD,
//     YYYYMMDD with an optional time (HH:MM[:SS[.f]]) and zone suffix (Z, +08:00,
//     -0500), or YYYYMMDDHHMMSS (what dorisio.Write's value checks let through); DATETIME
//     fraction digits beyond the scale are rounded half up (cut for 2.0), as
//     the version's BE loads them. Time zone names are Go's database.
//   - A field with text after its closing enclose character is kept verbatim.
//   - A CSV `\r` before `\n` is data.
//   - ARRAY, MAP, STRUCT, JSON and VARIANT values are read as JSON text (from CSV too);
//     MAP and JSON object keys are stored sorted, not in input order.
//   - Count-only parsing counts lines (non-empty, after skip_lines) and does not apply
//     `where`, type checks or the delete sign; a count-only unique table counts every
//     loaded row.
//   - A partial update of a new key fills unlisted NOT NULL columns with zero values
//     instead of failing the load.
//   - Some HeaderError texts are doristest's own (each names the header and value): those
//     prefixed "[NOT_IMPLEMENTED_ERROR]doristest does not support", invalid booleans,
//     max_filter_ratio, jsonpaths, sequence column and partial update checks.
package table
