// Package plural says a count with its noun in the right number ("1 load",
// "2 loads", "1 retry", "0 retries"), so that user output never reads
// "1 loads" or "table(s)".
package plural

import (
	"strconv"
	"strings"
)

// Count returns n and noun, the noun's last word made plural unless n is
// 1: "plain load" gives "3 plain loads", "retry" gives "2 retries".
func Count[T ~int | ~int64 | ~uint64](n T, noun string) string {
	s := strconv.FormatInt(int64(n), 10) + " "
	if n == 1 {
		return s + noun
	}
	return s + Of(noun)
}

// Of is noun's last word made plural by the English rule for the nouns
// this project counts: a consonant then y gives ies, s, x, ch and sh give
// es, anything else takes s.
func Of(noun string) string {
	switch {
	case strings.HasSuffix(noun, "y") && len(noun) > 1 && !strings.ContainsRune("aeiou", rune(noun[len(noun)-2])):
		return noun[:len(noun)-1] + "ies"
	case strings.HasSuffix(noun, "s"), strings.HasSuffix(noun, "x"), strings.HasSuffix(noun, "ch"), strings.HasSuffix(noun, "sh"):
		return noun + "es"
	}
	return noun + "s"
}
