package sink

import "github.com/dorisbeam/dorisbeam/dorisio/internal/conn"

// ConnSpec is the serializable part of Config that workers need
// (conn.Spec, shared with Read): everything but the password itself,
// which is referenced by PasswordRef.
type ConnSpec = conn.Spec

// RememberSecret keeps a Config.Password in this process (conn.RememberSecret).
func RememberSecret(pw string) string { return conn.RememberSecret(pw) }
