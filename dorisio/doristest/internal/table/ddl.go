package table

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseDDL parses a table definition: Doris' CREATE TABLE statement, or its
// short form without the CREATE TABLE words,
//
//	[CREATE TABLE [IF NOT EXISTS]] [internal.]db.name (column, ... [, INDEX ...])
//	    [ENGINE = olap]
//	    [DUPLICATE KEY(col, ...) | UNIQUE KEY(col, ...) | AGGREGATE KEY(col, ...)]
//	    [CLUSTER BY (col, ...)] [COMMENT 'text']
//	    [[AUTO] PARTITION BY RANGE|LIST (...) (...)]
//	    [DISTRIBUTED BY HASH(col, ...) | RANDOM [BUCKETS n | BUCKETS AUTO]]
//	    [ROLLUP (...)] [PROPERTIES ("key" = "value", ...)] [;]
//
// with columns as column() reads them. The clauses may come in any order.
// What Doris checks when it creates a table is checked, in Doris' words
// (key columns a prefix of the columns, key and aggregation types,
// defaults, AUTO_INCREMENT, distribution columns, the sequence column
// properties); a UNIQUE or AGGREGATE table without DISTRIBUTED BY is
// distributed by its key (real Doris refuses it: StrictDDL does too).
// Errors quote the offending text.
func ParseDDL(s string) (*Schema, error) {
	sc, _, err := parseCreateTable(s, "", false)
	if err != nil {
		return nil, fmt.Errorf("table: parse %q: %w", s, err)
	}
	return sc, nil
}

// StrictDDL parses a CREATE TABLE statement received as SQL in database
// sessionDB (the table name may then be unqualified), with every check of
// Doris', and reports IF NOT EXISTS. Errors are *DDLError.
func StrictDDL(s, sessionDB string) (sc *Schema, ifNotExists bool, err error) {
	return parseCreateTable(s, sessionDB, true)
}

func parseCreateTable(src, sessionDB string, strict bool) (*Schema, bool, error) {
	p := &ddlParser{src: src}
	ifNotExists := false
	if p.keyword("CREATE") {
		if p.keyword("EXTERNAL") || p.keyword("TEMPORARY") {
			return nil, false, notSupported("EXTERNAL or TEMPORARY tables")
		}
		if !p.keyword("TABLE") {
			return nil, false, p.syntax("expected TABLE")
		}
		if p.keyword("IF") {
			if !p.keywords("NOT", "EXISTS") {
				return nil, false, p.syntax("expected IF NOT EXISTS")
			}
			ifNotExists = true
		}
	} else if strict {
		return nil, false, p.syntax("expected CREATE TABLE")
	}
	db, name, err := p.tableName(sessionDB)
	if err != nil {
		return nil, false, err
	}
	s := &Schema{DB: db, Name: name}
	if err := p.columns(s); err != nil {
		return nil, false, err
	}
	c := &createClauses{}
	if err := p.clauses(s, c); err != nil {
		return nil, false, err
	}
	if err := finish(s, c, strict); err != nil {
		return nil, false, err
	}
	return s, ifNotExists, nil
}

// createClauses holds what the table clauses say before finish checks it.
type createClauses struct {
	keysGiven    bool
	distribution bool // DISTRIBUTED BY was given
	random       bool // ... RANDOM
}

// columns reads the parenthesised column list, with its INDEX definitions.
func (p *ddlParser) columns(s *Schema) error {
	if err := p.expect('('); err != nil {
		return err
	}
	for {
		if p.keyword("INDEX") {
			name, err := p.ident()
			if err != nil {
				return err
			}
			if _, err := p.group(); err != nil {
				return err
			}
			for !p.peek(',') && !p.peek(')') {
				switch {
				case p.keyword("USING"):
					if _, err := p.ident(); err != nil {
						return err
					}
				case p.keyword("PROPERTIES"):
					if _, err := p.properties(); err != nil {
						return err
					}
				case p.keyword("COMMENT"):
					if _, err := p.str(); err != nil {
						return err
					}
				default:
					return p.syntax("index %s: unexpected text", name)
				}
			}
			s.Unmodelled = append(s.Unmodelled, "INDEX "+name)
		} else {
			c, err := p.column()
			if err != nil {
				return err
			}
			s.Columns = append(s.Columns, c)
		}
		if !p.take(',') {
			return p.expect(')')
		}
		if p.peek(')') { // a trailing comma
			p.pos++
			return nil
		}
	}
}

// clauses reads the table clauses after the column list, in any order.
func (p *ddlParser) clauses(s *Schema, c *createClauses) error {
	seen := map[string]bool{}
	for !p.end() {
		var clause string
		var err error
		switch {
		case p.keyword("ENGINE"):
			clause = "ENGINE"
			err = p.engine()
		case p.keysType(&s.Keys):
			clause = "KEY"
			if !p.keyword("KEY") {
				return p.syntax("expected KEY")
			}
			s.Key, err = p.identList()
			c.keysGiven = true
		case p.keywords("CLUSTER", "BY"):
			clause = "CLUSTER BY"
			_, err = p.identList()
			s.Unmodelled = append(s.Unmodelled, clause)
		case p.keyword("COMMENT"):
			clause = "COMMENT"
			s.Comment, err = p.str()
		case p.keyword("PARTITION"):
			clause = "PARTITION BY"
			err = p.partition(s, false)
		case p.keywords("AUTO", "PARTITION"):
			clause = "PARTITION BY"
			err = p.partition(s, true)
		case p.keywords("DISTRIBUTED", "BY"):
			clause = "DISTRIBUTED BY"
			err = p.distribution(s, c)
		case p.keyword("ROLLUP"):
			clause = "ROLLUP"
			_, err = p.group()
			s.Unmodelled = append(s.Unmodelled, clause)
		case p.keyword("PROPERTIES"):
			clause = "PROPERTIES"
			s.Properties, err = p.properties()
		case p.keyword("BROKER"), p.keyword("AS"):
			return notSupported("CREATE TABLE ... AS SELECT or BROKER properties")
		default:
			return p.syntax("unexpected text")
		}
		if err != nil {
			return err
		}
		if seen[clause] {
			return p.syntax("%s given twice", clause)
		}
		seen[clause] = true
	}
	return nil
}

// engine reads = name after ENGINE: only olap.
func (p *ddlParser) engine() error {
	p.take('=')
	e, err := p.ident()
	if err != nil {
		return err
	}
	if !strings.EqualFold(e, "olap") {
		return notSupported("ENGINE=%s (only olap)", e)
	}
	return nil
}

// keysType reads DUPLICATE, UNIQUE or AGGREGATE into k.
func (p *ddlParser) keysType(k *KeysType) bool {
	for _, w := range []struct {
		word string
		keys KeysType
	}{{"DUPLICATE", DupKeys}, {"UNIQUE", UniqueKeys}, {"AGGREGATE", AggKeys}} {
		if p.keyword(w.word) {
			*k = w.keys
			return true
		}
	}
	return false
}

// partition reads BY RANGE|LIST (...) (...) after [AUTO] PARTITION.
func (p *ddlParser) partition(s *Schema, auto bool) error {
	pt := &Partition{Auto: auto}
	if !p.keyword("BY") {
		return p.syntax("expected BY")
	}
	switch {
	case p.keyword("RANGE"):
		pt.Kind = "RANGE"
	case p.keyword("LIST"):
		pt.Kind = "LIST"
	default:
		return p.syntax("expected RANGE or LIST")
	}
	cols, err := p.group()
	if err != nil {
		return err
	}
	for _, c := range strings.Split(cols, ",") {
		if c = strings.Trim(strings.TrimSpace(c), "`"); c != "" && !strings.ContainsAny(c, "()' ") {
			pt.Columns = append(pt.Columns, c)
		}
	}
	if p.peek('(') {
		if pt.Text, err = p.group(); err != nil {
			return err
		}
	}
	s.Partition = pt
	s.Unmodelled = append(s.Unmodelled, "PARTITION BY "+pt.Kind)
	return nil
}

// distribution reads HASH(col, ...) | RANDOM [BUCKETS n | AUTO].
func (p *ddlParser) distribution(s *Schema, c *createClauses) error {
	c.distribution = true
	switch {
	case p.keyword("HASH"):
		cols, err := p.identList()
		if err != nil {
			return err
		}
		s.DistributedBy = cols
	case p.keyword("RANDOM"):
		c.random = true
	default:
		return p.syntax("expected HASH(...) or RANDOM")
	}
	s.Buckets = 10 // Doris' default_bucket_num
	if p.keyword("BUCKETS") {
		if p.keyword("AUTO") {
			s.Buckets = 0
			return nil
		}
		n, err := p.integer()
		if err != nil {
			return err
		}
		if n <= 0 || n > 1<<20 {
			return dorisErr("Number of hash distribution should be greater than zero.")
		}
		s.Buckets = int(n)
	}
	return nil
}

// finish completes and checks a parsed table as Doris does when it
// creates one (CreateTableInfo.validate), in Doris' words.
func finish(s *Schema, c *createClauses, strict bool) error {
	if len(s.Columns) == 0 {
		return dorisErr("table should contain at least one column")
	}
	for i, col := range s.Columns {
		if strings.HasPrefix(strings.ToUpper(col.Name), "__DORIS_") {
			return dorisErr("Disable to create table column with name start with __DORIS_: %s", strings.ToUpper(col.Name))
		}
		for _, prev := range s.Columns[:i] {
			if strings.EqualFold(prev.Name, col.Name) {
				return dorisErr("Duplicate column name '%s'", col.Name)
			}
		}
	}
	withoutKeys := false
	if v, ok := s.Property("enable_duplicate_without_keys_by_default"); ok {
		withoutKeys = strings.EqualFold(v, "true")
		if withoutKeys && c.keysGiven {
			return dorisErr("table property 'enable_duplicate_without_keys_by_default' only can set 'true' when create olap table by default.")
		}
	}
	if !c.keysGiven {
		defaultKeys(s, withoutKeys)
	}
	for i := range s.Columns {
		s.Columns[i].Key = false // set again for the key columns by checkKeys
	}
	if _, ok := s.Property("enable_unique_key_merge_on_write"); ok && !s.IsUnique() {
		return dorisErr("enable_unique_key_merge_on_write property only support unique key table")
	}
	if s.IsUnique() {
		s.MergeOnWrite = true
		if v, ok := s.Property("enable_unique_key_merge_on_write"); ok {
			switch strings.ToLower(v) {
			case "true":
			case "false":
				s.MergeOnWrite = false
			default:
				return dorisErr("Invalid enable_unique_key_merge_on_write value: %s", v)
			}
		}
	}
	if err := checkKeys(s, withoutKeys); err != nil {
		return err
	}
	if err := checkDistribution(s, c, strict); err != nil {
		return err
	}
	autoInc := 0
	for i := range s.Columns {
		if err := checkColumn(&s.Columns[i], s.Keys); err != nil {
			return err
		}
		if s.Columns[i].AutoIncrement {
			if autoInc++; autoInc > 1 {
				return dorisErr("there can be at most one auto increment column in OlapTable.")
			}
		}
	}
	if err := sequenceProperties(s); err != nil {
		return err
	}
	for _, pr := range s.Properties {
		switch strings.ToLower(pr.Key) {
		case "function_column.sequence_col", "function_column.sequence_type", "enable_unique_key_merge_on_write",
			"enable_duplicate_without_keys_by_default":
		default:
			s.Unmodelled = append(s.Unmodelled, "property "+pr.Key)
		}
	}
	return nil
}

// defaultKeys picks the key of a table declared without one, as Doris
// does: the columns before the first with an aggregation type (then an
// AGGREGATE table), else a DUPLICATE table's short key: up to three
// leading columns, ending before a FLOAT, DOUBLE, STRING, JSON or complex
// column and after a VARCHAR (Doris also stops at 36 bytes of key).
func defaultKeys(s *Schema, withoutKeys bool) {
	for _, c := range s.Columns {
		if c.Agg != AggNone {
			s.Keys = AggKeys
			for _, k := range s.Columns {
				if k.Agg != AggNone {
					break
				}
				s.Key = append(s.Key, k.Name)
			}
			return
		}
	}
	s.Keys = DupKeys
	if withoutKeys {
		return
	}
	for _, c := range s.Columns {
		if len(s.Key) == 3 {
			break
		}
		switch c.Type.Kind {
		case Float, Double, String, JSON, Variant, Array, Map, Struct:
			return
		}
		s.Key = append(s.Key, c.Name)
		if c.Type.Kind == Varchar {
			return
		}
	}
}

// checkKeys checks the key columns (CreateTableInfo.validateKeyColumns) and
// marks them.
func checkKeys(s *Schema, withoutKeys bool) error {
	if len(s.Key) == 0 {
		if s.Keys != DupKeys {
			return dorisErr("The number of key columns is 0.")
		}
		if !withoutKeys {
			return dorisErr("The olap table first column could not be float, double, string or array, struct, map, please use decimal or varchar instead.")
		}
	}
	if len(s.Key) > len(s.Columns) {
		return dorisErr("The number of key columns should be less than the number of columns.")
	}
	for i, k := range s.Key {
		col := &s.Columns[i]
		if !strings.EqualFold(k, col.Name) {
			if s.Index(k) < 0 {
				return dorisErr("Key column[%s] doesn't exist.", k)
			}
			return dorisErr("Key columns should be a ordered prefix of the schema. KeyColumns[%d] (starts from zero) is %s, but corresponding column is %s in the previous columns declaration.", i, k, col.Name)
		}
		if col.Agg != AggNone {
			return dorisErr("Key column[%s] should not specify aggregate type.", col.Name)
		}
		s.Key[i], col.Key = col.Name, true
	}
	for _, col := range s.Columns[len(s.Key):] {
		switch {
		case s.Keys == AggKeys && col.Agg == AggNone:
			return dorisErr("%s table should specify aggregate type for non-key column[%s]", s.Keys, col.Name)
		case s.Keys != AggKeys && col.Agg != AggNone:
			return dorisErr("%s table should not specify aggregate type for non-key column[%s]", s.Keys, col.Name)
		}
	}
	return nil
}

// checkDistribution checks DISTRIBUTED BY (DistributionDescriptor.validate).
// Without it a DUPLICATE table is RANDOM BUCKETS AUTO, as in Doris; a
// UNIQUE or AGGREGATE table is HASH(key) BUCKETS AUTO, unless strict: Doris
// refuses it as random.
func checkDistribution(s *Schema, c *createClauses, strict bool) error {
	if !c.distribution {
		if s.Keys == DupKeys || strict {
			c.random = true
		} else {
			s.DistributedBy = append([]string(nil), s.Key...)
		}
	}
	if !c.random {
		for i, d := range s.DistributedBy {
			for _, prev := range s.DistributedBy[:i] {
				if prev == d {
					return dorisErr("Duplicate key in distribution desc is not allowed")
				}
			}
			j := s.Index(d)
			if j < 0 {
				return dorisErr("column %s is not found in distribution desc", d)
			}
			if !s.Columns[j].Key && s.Keys != DupKeys {
				// A UNIQUE or AGGREGATE table merges the rows of a key, so
				// they must land in one bucket.
				return dorisErr("Distribution column[%s] is not key column", d)
			}
			if k := s.Columns[j].Type.Kind; k == Float || k == Double {
				return dorisErr("Floating point type column can not be distribution column")
			}
			s.DistributedBy[i] = s.Columns[j].Name
		}
		return nil
	}
	switch s.Keys {
	case UniqueKeys:
		return dorisErr("Create unique keys table should not contain random distribution desc")
	case AggKeys:
		for _, col := range s.Columns {
			if col.Agg == AggReplace || col.Agg == AggReplaceIfNotNull {
				return dorisErr("Create aggregate keys table with value columns of which aggregate type is REPLACE or REPLACE_IF_NOT_NULL should not contain random distribution desc")
			}
		}
	}
	return nil
}

// sequenceProperties reads function_column.sequence_col and
// function_column.sequence_type (PropertyAnalyzer, InternalCatalog).
func sequenceProperties(s *Schema) error {
	col, hasCol := s.Property("function_column.sequence_col")
	typ, hasType := s.Property("function_column.sequence_type")
	if (hasCol || hasType) && !s.IsUnique() {
		return dorisErr("sequence column only support UNIQUE_KEYS")
	}
	if hasCol {
		i := s.Index(col)
		if i < 0 {
			return dorisErr("The specified sequence column[%s] not exists", col)
		}
		if !sequenceKind(s.Columns[i].Type.Kind) {
			return dorisErr("Sequence type only support integer types and date types")
		}
		s.SequenceCol = s.Columns[i].Name
	}
	if hasType {
		t, err := (&ddlParser{src: typ}).typ()
		if err != nil || !sequenceKind(t.Kind) {
			return dorisErr("sequence type only support integer types and date types")
		}
		if hasCol {
			return dorisErr("The sequence_col and sequence_type cannot be set at the same time")
		}
		s.SequenceType = &t
	}
	return nil
}

// sequenceKind reports whether a sequence column may be of kind k: Doris
// takes fixed-point integers and dates.
func sequenceKind(k Kind) bool {
	switch k {
	case TinyInt, SmallInt, Int, BigInt, LargeInt, Date, DateTime:
		return true
	}
	return false
}

// String renders s as a CREATE TABLE statement that ParseDDL reads back.
func (s *Schema) String() string {
	var b strings.Builder
	b.WriteString("CREATE TABLE `" + s.DB + "`.`" + s.Name + "` (\n")
	for i, c := range s.Columns {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString("  " + c.String())
	}
	b.WriteString("\n)")
	if len(s.Key) > 0 {
		b.WriteString(" " + map[KeysType]string{DupKeys: "DUPLICATE", UniqueKeys: "UNIQUE", AggKeys: "AGGREGATE"}[s.Keys] + " KEY(" + quoteNames(s.Key) + ")")
	}
	if s.Comment != "" {
		b.WriteString(" COMMENT " + strconv.Quote(s.Comment))
	}
	if s.Partition != nil {
		if s.Partition.Auto {
			b.WriteString(" AUTO")
		}
		b.WriteString(" PARTITION BY " + s.Partition.Kind + "(" + quoteNames(s.Partition.Columns) + ") (" + s.Partition.Text + ")")
	}
	if len(s.DistributedBy) > 0 {
		b.WriteString(" DISTRIBUTED BY HASH(" + quoteNames(s.DistributedBy) + ")")
	} else {
		b.WriteString(" DISTRIBUTED BY RANDOM")
	}
	if s.Buckets > 0 {
		b.WriteString(" BUCKETS " + strconv.Itoa(s.Buckets))
	} else {
		b.WriteString(" BUCKETS AUTO")
	}
	if len(s.Properties) > 0 {
		props := make([]string, len(s.Properties))
		for i, p := range s.Properties {
			props[i] = strconv.Quote(p.Key) + " = " + strconv.Quote(p.Value)
		}
		b.WriteString(" PROPERTIES (" + strings.Join(props, ", ") + ")")
	}
	return b.String()
}

func quoteNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	return strings.Join(q, ", ")
}
