package dorisio

import (
	"regexp"
	"strings"
	"testing"
)

var dorisLabel = regexp.MustCompile(`^[-_A-Za-z0-9:]{1,128}$`) // protocol §8

func TestLabelsAreValidForAnyTableName(t *testing.T) {
	prefix := strings.Repeat("p", maxPrefixLen)
	for _, table := range []string{"t", "events_2026", "weird.table name/ü", strings.Repeat("x", 300), ""} {
		l := newLabel(prefix, "0123abcd", table)
		if !dorisLabel.MatchString(l) {
			t.Errorf("newLabel(%q) = %q: not a valid Doris label", table, l)
		}
		if !strings.HasPrefix(l, labelPrefixOf(prefix)) {
			t.Errorf("newLabel(%q) = %q: lacks prefix", table, l)
		}
	}
	if newLabel("p", "r", "t") == newLabel("p", "r", "t") {
		t.Error("two loads got the same label")
	}
}

func TestOnePrefixNeverMatchesAnothersLabels(t *testing.T) {
	other := newLabel("job42", newRunID(), "t")
	if strings.HasPrefix(other, labelPrefixOf("job4")) {
		t.Errorf("label %q of prefix job42 matches prefix job4's cleanup pattern %q", other, labelPrefixOf("job4"))
	}
	for _, bad := range []string{"", "a_b", "a:b", "a.b", strings.Repeat("a", maxPrefixLen+1)} {
		if validPrefix(bad) {
			t.Errorf("validPrefix(%q) = true", bad)
		}
	}
	if !validPrefix(defaultPrefix()) {
		t.Errorf("default prefix %q is invalid", defaultPrefix())
	}
}
