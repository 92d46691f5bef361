package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// checkPasswordFile reads --password-file here, as this program does to
// list and abort open transactions and to verify, before any job runs: a
// file it cannot read is refused, saying why (a job started anyway failed
// on its worker saying the same), and an empty one (a secret that was not
// mounted) is said on warn, as an unset --password-env variable is. The
// path is never shown, as no value of the flag is: it may be the password
// given in the wrong place. A relative path that is no file here is left
// to Config.PasswordFile's own refusal.
func checkPasswordFile(path string, warn io.Writer) error {
	if _, err := os.Stat(path); !filepath.IsAbs(path) && errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // it repeats the path
		}
		return refused("--password-file: cannot be read here: %v; it is read here and on every worker", err)
	}
	if strings.TrimRight(string(b), "\r\n") == "" {
		fmt.Fprintf(warn, "load: --password-file: the file is empty: connecting without a password\n")
	}
	return nil
}
