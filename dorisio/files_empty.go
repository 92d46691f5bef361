package dorisio

import "fmt"

// EmptyMatchTreatment says what WriteFiles does with a pattern that
// matches no file, as Beam's fileio.EmptyMatchTreatment does.
type EmptyMatchTreatment int

const (
	// DisallowEmptyMatch fails the job, naming the pattern (the default):
	// a typo in a path is not a successful load of nothing.
	DisallowEmptyMatch EmptyMatchTreatment = iota
	// AllowEmptyMatch lets a pattern match nothing (or only directories):
	// a daily export directory that may be empty.
	AllowEmptyMatch
)

// WithEmptyMatchTreatment says what a pattern matching no file does:
// DisallowEmptyMatch (the default) fails the job naming the pattern,
// AllowEmptyMatch loads nothing for it. WriteFiles only.
func WithEmptyMatchTreatment(t EmptyMatchTreatment) WriteOption {
	return func(o *writeOptions) {
		o.fileOption(fmt.Sprintf("WithEmptyMatchTreatment(%d)", int(t)))
		if t != DisallowEmptyMatch && t != AllowEmptyMatch {
			o.fail("WithEmptyMatchTreatment(%d): want dorisio.DisallowEmptyMatch or dorisio.AllowEmptyMatch", int(t))
			return
		}
		o.Files.EmptyMatch = t
	}
}
