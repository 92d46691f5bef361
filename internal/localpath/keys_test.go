package localpath

import (
	"os"
	"path/filepath"
	"testing"
)

// Keys.Stat names every kind of path as Key does, and stats what os.Stat
// stats: plain files, files through a linked directory, linked files,
// dangling links, missing files, relative paths.
func TestKeysNameFilesAsKeyDoes(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	must(t, os.Mkdir(real, 0o755))
	must(t, os.WriteFile(filepath.Join(real, "a.csv"), []byte("1\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(real, "b.csv"), []byte("22\n"), 0o644))
	must(t, os.Symlink(real, filepath.Join(dir, "latest")))
	must(t, os.Symlink(filepath.Join(real, "b.csv"), filepath.Join(real, "link.csv")))
	must(t, os.Symlink(filepath.Join(real, "gone.csv"), filepath.Join(real, "dangling.csv")))
	t.Chdir(dir)
	paths := []string{
		filepath.Join(real, "a.csv"), filepath.Join(dir, "latest", "a.csv"), filepath.Join(dir, "latest", "link.csv"),
		filepath.Join(dir, "latest", "dangling.csv"), filepath.Join(dir, "latest", "missing.csv"), filepath.Join(dir, "nodir", "a.csv"),
		"latest/b.csv", "real/../latest/a.csv", "./real/a.csv", "/",
	}
	var k Keys
	for _, p := range paths {
		want := Key(p)
		wantFi, wantErr := os.Stat(want)
		got, fi, err := k.Stat(p)
		if got != want {
			t.Errorf("Keys.Stat(%q) = %q, Key = %q", p, got, want)
		}
		if (err != nil) != (wantErr != nil) || (err == nil && (fi.Size() != wantFi.Size() || !fi.ModTime().Equal(wantFi.ModTime()) || fi.Mode() != wantFi.Mode())) {
			t.Errorf("Keys.Stat(%q): stat %v, %v; os.Stat of its key: %v, %v", p, fi, err, wantFi, wantErr)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
