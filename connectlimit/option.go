package connectlimit

import (
	"fmt"
	"strconv"
	"time"

	"connectrpc.com/connect"

	"github.com/resilience4cata/adaptivelimit"
)

// An Option configures an interceptor.
type Option func(*options)

type options struct {
	code       connect.Code
	retryAfter time.Duration
	classify   func(err error) adaptivelimit.Outcome
	classOptions
}

// WithRejectionCode sets the code of rejected calls: connect.CodeResourceExhausted by
// default. NewInterceptor panics if c is not one of connect's codes.
func WithRejectionCode(c connect.Code) Option {
	return func(o *options) { o.code = c }
}

// WithRetryAfter sets the Retry-After metadata of a handler's rejections, rounded up to
// whole seconds: 1 second by default. A d of zero or less sends none.
func WithRetryAfter(d time.Duration) Option {
	return func(o *options) { o.retryAfter = d }
}

// WithClassifier replaces DefaultClassifier. It is called with the error that ends each
// admitted call, nil for a success; a handler that panics frees its slot without calling
// it. NewInterceptor panics if f is nil.
func WithClassifier(f func(err error) adaptivelimit.Outcome) Option {
	return func(o *options) { o.classify = f }
}

func newOptions(opts []Option) options {
	o := options{code: connect.CodeResourceExhausted, retryAfter: time.Second, classify: DefaultClassifier,
		classOptions: defaultClassOptions()}
	for _, opt := range opts {
		opt(&o)
	}
	if o.code < connect.CodeCanceled || o.code > connect.CodeUnauthenticated {
		panic(fmt.Sprintf("connectlimit: rejection code %d is not a connect error code", o.code))
	}
	if o.classify == nil {
		panic("connectlimit: nil classifier")
	}
	return o
}

// RetryAfterKey is the metadata of a handler's rejections that tells clients how many
// seconds to wait before they retry.
const RetryAfterKey = "Retry-After"

// retryAfterSeconds returns the Retry-After value for d, or "" for none.
func retryAfterSeconds(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
}
