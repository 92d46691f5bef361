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

// A thousand files of 1.2 MB at the default 64 MiB go in at most twenty
// loads, none past packCap RangeBytes, whatever the directory's name (the
// cut depends on the paths' hashes: cut by anchors alone, one directory in
// ten made more than twenty); a big or compressed file is a pack of its own.
func TestPackFilesFewLoadsOfAboutRangeBytes(t *testing.T) {
	const rangeBytes = 64 << 20
	most := 0
	for d := range 200 {
		dir := fmt.Sprintf("/tmp/TestLoad%d/%03d", 1_000_000_007*d%999_999_937, d%7)
		var files []fileSpec
		for i := 0; i < 1000; i++ {
			files = append(files, fileSpec{Path: fmt.Sprintf("%s/part-%04d.csv", dir, i), Size: 1_200_000})
		}
		files = append(files, fileSpec{Path: dir + "/big.csv", Size: 200 << 20}, fileSpec{Path: dir + "/small.csv.gz", Size: 1000})
		packs := packFiles(files, rangeBytes, "auto")
		alone := 0
		for _, p := range packs {
			var bytes int64
			for _, f := range p.Files {
				bytes += f.Size
			}
			if len(p.Files) == 1 && (p.Files[0].Path == dir+"/big.csv" || p.Files[0].Path == dir+"/small.csv.gz") {
				alone++
				continue
			}
			if bytes > packCap*rangeBytes {
				t.Errorf("%s: a pack of %d bytes, RangeBytes %d", dir, bytes, rangeBytes)
			}
		}
		if alone != 2 {
			t.Errorf("%s: the big and the compressed file are in %d packs of their own, want 2: %q", dir, alone, packKeys(packs))
		}
		n := len(packs) - alone
		most = max(most, n)
		if n > 20 {
			t.Errorf("%s: 1,000 files of 1.2 MB in %d packs, want at most 20", dir, n)
		}
	}
	t.Logf("at most %d packs of small files in 200 directories", most)
}

// However large RangeBytes, a pack of small files stays within the body a
// Doris 2.x BE takes by default (10 GiB), unless RangeBytes itself is past it.
func TestPackFilesStayWithinTheLargestBodyDorisTakes(t *testing.T) {
	for _, rangeBytes := range []int64{8 << 30, 12 << 30} {
		var files []fileSpec
		for i := 0; i < 40; i++ {
			files = append(files, fileSpec{Path: fmt.Sprintf("/data/part-%04d.csv", i), Size: rangeBytes / 3})
		}
		most := max(rangeBytes, 10<<30)
		for _, p := range packFiles(files, rangeBytes, "none") {
			var bytes int64
			for _, f := range p.Files {
				bytes += f.Size
			}
			if bytes > most {
				t.Errorf("RangeBytes %d: a pack of %d files, %d bytes, more than %d", rangeBytes, len(p.Files), bytes, most)
			}
		}
	}
}

// A file added to or removed from the listing (between a crashed run and
// its re-run) changes its own pack and the next ones until a cut falls on
// the same anchor again: the other packs are the same, so what the first
// run loaded of them is found loaded. Measured at every 20th place of the
// listing, adding and removing.
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
	var changes []int
	for at := 0; at < 2000; at += 20 {
		for _, change := range []struct {
			name  string
			files []fileSpec
		}{
			{"added", append(slices.Clone(files), fileSpec{Path: fmt.Sprintf("in/%05d.csv", at*2+1), Size: 500})},
			{"removed", slices.DeleteFunc(slices.Clone(files), func(f fileSpec) bool { return f.Path == fmt.Sprintf("in/%05d.csv", at*2) })},
		} {
			changed := 0
			for _, p := range packKeys(packFiles(change.files, rangeBytes, "none")) {
				if !slices.Contains(before, p) {
					changed++
				}
			}
			if changed > 8 {
				t.Errorf("one file %s at %d changed %d of %d packs, want at most 8", change.name, at, changed, len(before))
			}
			changes = append(changes, changed)
		}
	}
	slices.Sort(changes)
	median, p90 := changes[len(changes)/2], changes[len(changes)*9/10]
	t.Logf("%d packs; one file added or removed changed %d (median), %d (9 in 10), %d (most)", len(before), median, p90, changes[len(changes)-1])
	if median > 2 || p90 > 3 {
		t.Errorf("one file added or removed changed %d packs (median), %d (9 in 10), want at most 2 and 3", median, p90)
	}
}
