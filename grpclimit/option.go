package grpclimit

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/integration"
)

// A ServerOption configures the server interceptors, and a ClientOption the client ones. An
// Option configures both. Each option is of the kind its concept applies to, so that one
// given to the other side does not compile rather than doing nothing.
type (
	ServerOption interface{ server(*serverOptions) }
	ClientOption interface{ client(*clientOptions) }
	Option       interface {
		ServerOption
		ClientOption
	}
)

// options are what both sides have.
type options struct {
	code    codes.Code
	outcome func(err error) adaptivelimit.Outcome
	bypass  func(ctx context.Context, fullMethod string) bool
}

type serverOptions struct {
	options
	pushback time.Duration
	class    integration.ClassSource[call]
}

type clientOptions struct {
	options
	metadata string // the key that carries the context's class; "" for none
}

type serverOption func(*serverOptions)
type clientOption func(*clientOptions)
type bothOption func(*options)

func (f serverOption) server(o *serverOptions) { f(o) }
func (f clientOption) client(o *clientOptions) { f(o) }
func (f bothOption) server(o *serverOptions)   { f(&o.options) }
func (f bothOption) client(o *clientOptions)   { f(&o.options) }

// WithRejectionCode sets the code of rejected calls: codes.ResourceExhausted by default.
// The interceptor panics, when it is built, if c is codes.OK.
func WithRejectionCode(c codes.Code) Option {
	return bothOption(func(o *options) { o.code = c })
}

// WithPushback sets the grpc-retry-pushback-ms trailer of a server's rejections, rounded up
// to whole milliseconds and at most 2147483647 (the int32 that gRPC reads): 1 second by
// default. gRPC clients with a retry policy wait that long before they retry. A d of zero
// or less sends no pushback.
func WithPushback(d time.Duration) ServerOption {
	return serverOption(func(o *serverOptions) { o.pushback = d })
}

// WithOutcome replaces DefaultOutcome, on any of the four interceptors. It is called with
// the error that ends each admitted call, nil for a success; a server handler that panics
// frees its slot without calling it. A function that panics frees the slot without a
// sample: the panic goes on to the caller, except on the goroutine that finishes a client
// stream whose context is done, where it is dropped (see StreamClientInterceptor). An
// Outcome other than Sample, Drop, Ignore and Departed is Ignore. On a server, an outcome
// other than Sample of a call whose caller is gone (its context is done) is
// adaptivelimit.Departed, whatever f says (integration.ServerOutcome). The interceptor
// panics, when it is built, if f is nil.
func WithOutcome(f func(err error) adaptivelimit.Outcome) Option {
	return bothOption(func(o *options) { o.outcome = f })
}

func defaultOptions() options {
	return options{code: codes.ResourceExhausted, outcome: DefaultOutcome, bypass: DefaultBypass}
}

// check panics if l is nil or an option is invalid.
func (o *options) check(l *adaptivelimit.Limiter) {
	if l == nil {
		panic("grpclimit: nil limiter")
	}
	if o.code == codes.OK {
		panic(fmt.Sprintf("grpclimit: rejection code %v is not an error", o.code))
	}
	mustSet(o.outcome != nil, "WithOutcome")
	mustSet(o.bypass != nil, "WithBypass")
}

// mustSet panics, naming the option, where it was given a nil function.
func mustSet(ok bool, option string) {
	if !ok {
		panic("grpclimit: " + option + "(nil)")
	}
}

func newServerOptions(l *adaptivelimit.Limiter, opts []ServerOption) serverOptions {
	o := serverOptions{options: defaultOptions(), pushback: time.Second}
	for _, opt := range opts {
		opt.server(&o)
	}
	o.check(l)
	if err := o.class.Bind(l, "MetadataClass"); err != nil {
		panic("grpclimit: " + err.Error())
	}
	return o
}

func newClientOptions(l *adaptivelimit.Limiter, opts []ClientOption) clientOptions {
	o := clientOptions{options: defaultOptions(), metadata: DefaultClassMetadata}
	for _, opt := range opts {
		opt.client(&o)
	}
	o.check(l)
	return o
}

// pushbackMillis returns the trailer's value for d, or "" for none.
func pushbackMillis(d time.Duration) string { return integration.RetryHint(d, time.Millisecond) }
