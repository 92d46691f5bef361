package dorisname

import "testing"

func TestCreateTableTargetNamesTheTable(t *testing.T) {
	for _, c := range []struct {
		stmt, db, table string
		ifNotExists, ok bool
	}{
		{"CREATE TABLE demo.people (id INT)", "demo", "people", false, true},
		{"\ufeff-- daily\ncreate table if not exists `demo`.`my table`(id INT)", "demo", "my table", true, true},
		{"CREATE TABLE  IF  NOT\nEXISTS people\n(id INT)", "", "people", true, true},
		{"/* x */ CREATE TABLE `people` (id INT)", "", "people", false, true},
		{"CREATE TABLE `people (id INT)", "", "", false, false},
		{"CREATE VIEW v AS SELECT 1", "", "", false, false},
		{"CREATE TABLE a.b.c (id INT)", "", "", false, false},
	} {
		db, table, ine, ok := CreateTableTarget(c.stmt)
		if db != c.db || table != c.table || ine != c.ifNotExists || ok != c.ok {
			t.Errorf("CreateTableTarget(%q) = %q, %q, %v, %v; want %q, %q, %v, %v", c.stmt, db, table, ine, ok, c.db, c.table, c.ifNotExists, c.ok)
		}
	}
}
