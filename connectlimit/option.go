package connectlimit

import (
	"fmt"
	"time"

	"connectrpc.com/connect"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/integration"
)

// An Option configures an interceptor. NewInterceptor's interceptor is a handler's and a
// client's at once, so every option applies to it: those of a handler (WithRetryAfter,
// WithClassFrom) where it is installed in a handler, those of a client (WithClassHeader)
// where it is installed in a client.
type Option func(*options)

type options struct {
	code       connect.Code
	retryAfter time.Duration
	outcome    func(err error) adaptivelimit.Outcome
	classOptions
}

// WithRejectionCode sets the code of rejected calls: connect.CodeResourceExhausted by
// default. NewInterceptor panics if c is not one of connect's codes.
func WithRejectionCode(c connect.Code) Option {
	return func(o *options) { o.code = c }
}

// WithRetryAfter sets the Retry-After metadata of a handler's rejections, rounded up to
// whole seconds and at most 2147483647: 1 second by default. A d of zero or less sends none.
func WithRetryAfter(d time.Duration) Option {
	return func(o *options) { o.retryAfter = d }
}

// WithOutcome replaces DefaultOutcome, in a handler and in a client. It is called with the
// error that ends each admitted call, nil for a success; a handler that panics frees its
// slot without calling it. In a handler, an outcome other than Sample of a call whose caller
// is gone (its context is done) is adaptivelimit.Departed, whatever f says
// (integration.ServerOutcome). NewInterceptor panics if f is nil.
func WithOutcome(f func(err error) adaptivelimit.Outcome) Option {
	return func(o *options) { o.outcome = f }
}

func newOptions(l *adaptivelimit.Limiter, opts []Option) options {
	if l == nil {
		panic("connectlimit: nil limiter")
	}
	o := options{code: connect.CodeResourceExhausted, retryAfter: time.Second, outcome: DefaultOutcome,
		classOptions: defaultClassOptions()}
	for _, opt := range opts {
		opt(&o)
	}
	if o.code < connect.CodeCanceled || o.code > connect.CodeUnauthenticated {
		panic(fmt.Sprintf("connectlimit: rejection code %d is not a connect error code", o.code))
	}
	mustSet(o.outcome != nil, "WithOutcome")
	mustSet(o.bypass != nil, "WithBypass")
	if err := o.class.Bind(l, "HeaderClass"); err != nil {
		panic("connectlimit: " + err.Error())
	}
	return o
}

// mustSet panics, naming the option, where it was given a nil function.
func mustSet(ok bool, option string) {
	if !ok {
		panic("connectlimit: " + option + "(nil)")
	}
}

// RetryAfterKey is the metadata of a handler's rejections that tells clients how many
// seconds to wait before they retry.
const RetryAfterKey = "Retry-After"

// retryAfterSeconds returns the Retry-After value for d, or "" for none.
func retryAfterSeconds(d time.Duration) string { return integration.RetryHint(d, time.Second) }
