package sink

import (
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
)

// testOption sets one field of Options, as dorisio's With... option of the
// same name does after its checks (those are dorisio's tests'): the
// engine's tests read like a user's options.
type testOption func(*options.Options)

func WithMaxOpenTxns(n int) testOption     { return func(o *options.Options) { o.MaxOpenTxns = n } }
func WithMaxBatchRows(n int64) testOption  { return func(o *options.Options) { o.MaxBatchRows = n } }
func WithMaxBatchBytes(n int64) testOption { return func(o *options.Options) { o.MaxBatchBytes = n } }
func WithMaxBufferedBytes(n int64) testOption {
	return func(o *options.Options) { o.MaxBufferedBytes = n }
}
func WithMaxLoadBytes(n int64) testOption { return func(o *options.Options) { o.MaxLoadBytes = n } }
func WithLoadsInFlight(n int) testOption {
	return func(o *options.Options) { o.LoadsInFlight, o.LoadsInFlightSet = n, true }
}
func WithSpoolDir(dir string) testOption         { return func(o *options.Options) { o.SpoolDir = dir } }
func WithDelivery(d options.Delivery) testOption { return func(o *options.Options) { o.Delivery = d } }
func WithAbortLingeringTxns() testOption         { return func(o *options.Options) { o.AbortLingering = true } }
func WithAllOrNothing() testOption               { return func(o *options.Options) { o.AllOrNothing = true } }
func WithRetry(p options.RetryPolicy) testOption { return func(o *options.Options) { o.Retry = p } }
func WithFlushInterval(d time.Duration) testOption {
	return func(o *options.Options) { o.FlushInterval = d }
}

// testOptions are the default options with opts applied, and the defaults
// dorisio derives after all options (MaxBufferedBytes, QuotaWait).
func testOptions(opts ...testOption) options.Options {
	o := options.DefaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if o.MaxBufferedBytes == 0 {
		o.MaxBufferedBytes = 2 * o.MaxBatchBytes
	}
	if o.Retry.QuotaWait == 0 {
		o.Retry.QuotaWait = options.DefaultQuotaWait
	}
	return o
}
