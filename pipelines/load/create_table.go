package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/internal/dorisname"
)

// --ddl is a statement or a file holding one: a file that exists is read
// (its path may hold a '(', as "exports (2024)/t.sql" does); otherwise a
// table definition always has a '(', a path rarely does.

// ddlIsFile reports whether --ddl's value names a file.
func ddlIsFile(v string) bool {
	if v == "" {
		return false
	}
	if st, err := os.Stat(v); err == nil && st.Mode().IsRegular() {
		return true
	}
	return !strings.Contains(v, "(")
}

// ddlSource checks that a --ddl naming a file can be read.
func ddlSource(p *string) func() error {
	return func() error {
		if !ddlIsFile(*p) {
			return nil
		}
		if _, err := os.ReadFile(*p); err != nil {
			return fmt.Errorf("want a CREATE TABLE statement, or a file holding one: %v", err)
		}
		return nil
	}
}

// ddlText is --ddl's statement: its value, or the file it names.
func ddlText(o *options) (string, error) {
	if !ddlIsFile(o.ddl) {
		return o.ddl, nil
	}
	b, err := os.ReadFile(o.ddl)
	if err != nil {
		return "", refused("--ddl %s: %v", shown(o.ddl), err)
	}
	return strings.TrimSpace(string(b)), nil
}

// isCreateTable reports whether --ddl is a CREATE TABLE statement (after
// comments), not the short form 'db.name(col TYPE, ...)'.
func isCreateTable(ddl string) bool {
	f := strings.Fields(strings.ToUpper(dorisname.SQLStart(ddl)))
	return len(f) >= 2 && f[0] == "CREATE" && f[1] == "TABLE"
}

// createTable runs --ddl on the FE before the job (--create-table), and
// says whether it made the table.
func createTable(ctx context.Context, cfg dorisio.Config, o *options, w io.Writer) error {
	ddl, err := ddlText(o)
	if err != nil {
		return err
	}
	existed, err := dorisio.CreateTable(ctx, cfg, ddl)
	switch {
	case err != nil:
		return fmt.Errorf("--create-table: %w", err)
	case existed:
		fmt.Fprintf(w, "--create-table: the table exists; left as it is (database %s)\n", cfg.Database)
	default:
		fmt.Fprintf(w, "--create-table: ran --ddl on the FE (database %s)\n", cfg.Database)
	}
	return nil
}
