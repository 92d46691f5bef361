package dorisio

import (
	"fmt"
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
