package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
)

func TestMain(m *testing.M) { ptest.Main(m) }

func defaultTestOptions() *options {
	o := defaultOptions()
	o.tables, o.rows, o.batchBytes, o.batchRows = 3, 20_000, 1<<20, 5000
	return o
}

func runWithin(t *testing.T, o *options) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx, o) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		t.Fatal("pipeline did not finish within 2 minutes")
		return nil
	}
}

func TestSyntheticRunVerifiesEveryRowOnce(t *testing.T) {
	if err := runWithin(t, defaultTestOptions()); err != nil {
		t.Fatal(err)
	}
}

func TestFileInputLoadsEveryLineOnce(t *testing.T) {
	dir := t.TempDir()
	for f := 0; f < 3; f++ {
		var b bytes.Buffer
		for i := 0; i < 3000; i++ {
			fmt.Fprintf(&b, "%d,\"name %d\"\n", f*10_000+i, i)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%d.csv", f)), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o := defaultTestOptions()
	o.input, o.table, o.chunkBytes = filepath.Join(dir, "*.csv"), "people", 10_000
	o.ddl = "demo.people(id BIGINT, name VARCHAR(32))"
	if err := runWithin(t, o); err != nil {
		t.Fatal(err)
	}
}

// Reading every range of a file, for any chunk size, yields the file's
// bytes exactly once: no row lost or doubled at range edges.
func TestFileRangesPartitionTheRows(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var content []byte
	for i := 0; i < 400; i++ {
		content = append(content, bytes.Repeat([]byte{'a' + byte(i%26)}, rng.Intn(40))...)
		content = append(content, '\n')
	}
	content = append(content, "last row without newline"...)
	path := filepath.Join(t.TempDir(), "f.csv")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, chunk := range []int64{1, 2, 3, 7, 40, 41, 1000, int64(len(content)), 1 << 20} {
		ranges, err := fileRanges(path, chunk)
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		for _, r := range ranges {
			if err := (&readRangeFn{}).ProcessElement(context.Background(), r, func(b []byte) { got = append(got, b...) }); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got, content) {
			t.Fatalf("chunk %d: read %d bytes, file has %d; first difference at %d", chunk, len(got), len(content), firstDiff(got, content))
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestNoopSinkRuns(t *testing.T) {
	o := defaultTestOptions()
	o.sink = "noop"
	if err := runWithin(t, o); err != nil {
		t.Fatal(err)
	}
}

// An unset --password-env variable means no password, said once on stderr
// without any value; a set one is handed to the workers by name.
func TestPasswordEnvUnsetIsSaid(t *testing.T) {
	var warn strings.Builder
	if got := passwordEnv("LOAD_TEST_SURELY_UNSET_PW", &warn); got != "" {
		t.Errorf("unset: PasswordEnv %q, want none", got)
	}
	if w := warn.String(); strings.Count(w, "\n") != 1 || !strings.Contains(w, "LOAD_TEST_SURELY_UNSET_PW is not set") ||
		!strings.Contains(w, "without a password") || !strings.Contains(w, "--password-env") {
		t.Errorf("unset: warning %q", w)
	}
	t.Setenv("LOAD_TEST_PW", "s3cret")
	warn.Reset()
	if got := passwordEnv("LOAD_TEST_PW", &warn); got != "LOAD_TEST_PW" || warn.Len() != 0 {
		t.Errorf("set: PasswordEnv %q, warning %q", got, warn.String())
	}
}
