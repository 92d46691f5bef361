package plural

import "testing"

func TestCountSaysTheNounInTheRightNumber(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{Count(1, "load"), "1 load"},
		{Count(0, "load"), "0 loads"},
		{Count(int64(2), "plain load"), "2 plain loads"},
		{Count(1, "retry"), "1 retry"},
		{Count(5, "retry"), "5 retries"},
		{Count(2, "day"), "2 days"},
		{Count(3, "txn"), "3 txns"},
		{Count(2, "batch"), "2 batches"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
