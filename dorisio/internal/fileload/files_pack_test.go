package fileload

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func packKeys(packs []filePack) []string {
	var out []string
	for _, p := range packs {
		var names []string
		for _, f := range p.Files {
			names = append(names, f.Path)
		}
		out = append(out, strings.Join(names, ","))
	}
	return out
}

// The shape: a thousand files of 1.2 MB at the default 64 MiB go in
// at most twenty loads, none much past RangeBytes; a big or compressed file
// is a pack of its own.
func TestPackFilesFewLoadsOfAboutRangeBytes(t *testing.T) {
	const rangeBytes = 64 << 20
	var files []fileSpec
	for i := 0; i < 1000; i++ {
		files = append(files, fileSpec{Path: fmt.Sprintf("/data/part-%05d.csv", i), Size: 1_200_000})
	}
	files = append(files, fileSpec{Path: "/data/big.csv", Size: 200 << 20}, fileSpec{Path: "/data/small.csv.gz", Size: 1000})
	packs := packFiles(files, rangeBytes, "auto")
	alone := 0
	for _, p := range packs {
		var bytes int64
		for _, f := range p.Files {
			bytes += f.Size
		}
		if len(p.Files) == 1 && (p.Files[0].Path == "/data/big.csv" || p.Files[0].Path == "/data/small.csv.gz") {
			alone++
			continue
		}
		if bytes > packCap*rangeBytes {
			t.Errorf("a pack of %d bytes, RangeBytes %d", bytes, rangeBytes)
		}
	}
	if alone != 2 {
		t.Errorf("the big and the compressed file are in %d packs of their own, want 2: %q", alone, packKeys(packs))
	}
	t.Logf("%d packs of small files", len(packs)-alone)
	if n := len(packs) - alone; n > 20 {
		t.Errorf("1,000 files of 1.2 MB in %d packs, want at most 20", n)
	}
}

// A file added to or removed from the listing (between a crashed run and
// its re-run) changes only its own pack, and those cut at the cap up to the
// next anchor: the other packs are the same, so what the first run loaded
// of them is found loaded.
func TestPackFilesAFileAddedOrRemovedChangesFewPacks(t *testing.T) {
	const rangeBytes = 10_000
	var files []fileSpec
	for i := 0; i < 2000; i++ {
		files = append(files, fileSpec{Path: fmt.Sprintf("in/%05d.csv", i*2), Size: int64(300 + i%7*100)})
	}
	before := packKeys(packFiles(files, rangeBytes, "none"))
	slices.Reverse(files) // the listing's order does not matter
	if again := packKeys(packFiles(files, rangeBytes, "none")); !slices.Equal(before, again) {
		t.Fatal("the same files in another order are packed otherwise")
	}
	for _, change := range []struct {
		name  string
		files []fileSpec
	}{
		{"added", append(slices.Clone(files), fileSpec{Path: "in/02001.csv", Size: 500})},
		{"removed", slices.DeleteFunc(slices.Clone(files), func(f fileSpec) bool { return f.Path == "in/02000.csv" })},
	} {
		changed := 0
		for _, p := range packKeys(packFiles(change.files, rangeBytes, "none")) {
			if !slices.Contains(before, p) {
				changed++
			}
		}
		t.Logf("%d packs; %d changed by one file %s", len(before), changed, change.name)
		if changed > 3 {
			t.Errorf("one file %s changed %d of %d packs, want at most 3", change.name, changed, len(before))
		}
	}
}
