package grpclimit

import (
	"fmt"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/resilience4cata/adaptivelimit"
)

// An Option configures an interceptor.
type Option func(*options)

type options struct {
	code     codes.Code
	pushback time.Duration
	classify func(err error) adaptivelimit.Outcome
	classOptions
}

// WithRejectionCode sets the code of rejected calls: codes.ResourceExhausted by default.
// The interceptor panics, when it is built, if c is codes.OK.
func WithRejectionCode(c codes.Code) Option {
	return func(o *options) { o.code = c }
}

// WithPushback sets the grpc-retry-pushback-ms trailer of a server's rejections, rounded up
// to whole milliseconds: 1 second by default. gRPC clients with a retry policy wait that
// long before they retry. A d of zero or less sends no pushback.
func WithPushback(d time.Duration) Option {
	return func(o *options) { o.pushback = d }
}

// WithClassifier replaces DefaultClassifier. It is called with the error that ends each
// admitted call, nil for a success; a server handler that panics frees its slot without
// calling it. A classifier that panics frees the slot without a sample: the panic goes on to
// the caller, except on the goroutine that finishes a client stream whose context is done,
// where it is dropped (see StreamClientInterceptor). An Outcome other than Sample, Drop and
// Ignore is Ignore. The interceptor panics, when it is built, if f is nil.
func WithClassifier(f func(err error) adaptivelimit.Outcome) Option {
	return func(o *options) { o.classify = f }
}

func newOptions(opts []Option) options {
	o := options{code: codes.ResourceExhausted, pushback: time.Second, classify: DefaultClassifier, classOptions: defaultClassOptions()}
	for _, opt := range opts {
		opt(&o)
	}
	if o.code == codes.OK {
		panic(fmt.Sprintf("grpclimit: rejection code %v is not an error", o.code))
	}
	if o.classify == nil {
		panic("grpclimit: nil classifier")
	}
	return o
}

// pushbackMillis returns the trailer's value for d, or "" for none.
func pushbackMillis(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return strconv.FormatInt(int64((d+time.Millisecond-1)/time.Millisecond), 10)
}
