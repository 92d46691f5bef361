// Package dorisname holds the naming rules that dorisio and the load
// command share: Doris' database and table names, the names of the
// environment variables a password is read from, and where a statement
// pasted from a .sql file starts (statement.go).
package dorisname

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// maxDatabase is the longest database name Doris takes (FeNameFormat's
// common-name rule: 64 characters).
const maxDatabase = 64

// nameRule is what Database and Table say a refused name lacks.
const nameRule = "Doris names start with a letter, then letters, digits, '-' or '_' (FeNameFormat; letters beyond ASCII need the FE's enable_unicode_name_support)"

// Database reports why Doris would refuse name as a database, or nil.
func Database(name string) error {
	if err := check(name); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(name); n > maxDatabase {
		return fmt.Errorf("%d characters; Doris takes at most %d", n, maxDatabase)
	}
	return nil
}

// Table reports why Doris would refuse name as a table, or nil. Its length
// is the FE's table_name_length_limit (64 by default, configurable), left
// to Doris.
func Table(name string) error { return check(name) }

// check applies FeNameFormat's table and common-name patterns,
// ^[a-zA-Z\p{L}][a-zA-Z0-9-_\p{L}]*$, with Unicode letters allowed (the
// FE refuses them itself unless enable_unicode_name_support is on).
func check(name string) error {
	if name == "" {
		return fmt.Errorf("empty")
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("not UTF-8; %s", nameRule)
	}
	for i, r := range name {
		switch {
		case unicode.IsLetter(r):
		case i > 0 && (r >= '0' && r <= '9' || r == '-' || r == '_'):
		default:
			return fmt.Errorf("%s", nameRule)
		}
	}
	return nil
}

// IsEnvVar reports whether name is an environment variable's name as
// shells write them: [A-Za-z_][A-Za-z0-9_]*. Anything else given as one is
// refused without being shown: it may be the password itself.
func IsEnvVar(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// ShowEnvVar reports whether an environment variable's name may be shown in
// a message: only an upper-case name such as DORIS_PASSWORD, which is
// plainly a name. Any other may be a password given where its name goes.
func ShowEnvVar(name string) bool {
	if !IsEnvVar(name) {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= 'a' && c <= 'z' {
			return false
		}
	}
	return true
}
