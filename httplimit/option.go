package httplimit

import (
	"fmt"
	"net/http"
	"time"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/integration"
)

// A ServerOption configures Middleware, and a ClientOption Transport. An Option configures
// both. Each option is of the kind its concept applies to, so that one given to the other
// side does not compile rather than doing nothing.
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
	bypass func(*http.Request) bool
}

type serverOptions struct {
	options
	status     int
	retryAfter time.Duration
	outcome    func(r *http.Request, status int) adaptivelimit.Outcome
	class      integration.ClassSource[*http.Request]
}

type clientOptions struct {
	options
	outcome func(resp *http.Response, err error) adaptivelimit.Outcome
	header  string // the header that carries the context's class; "" for none
}

type serverOption func(*serverOptions)
type clientOption func(*clientOptions)
type bothOption func(*options)

func (f serverOption) server(o *serverOptions) { f(o) }
func (f clientOption) client(o *clientOptions) { f(o) }
func (f bothOption) server(o *serverOptions)   { f(&o.options) }
func (f bothOption) client(o *clientOptions)   { f(&o.options) }

// WithRejectionStatus sets the status of Middleware's rejections: 503 Service Unavailable
// by default, 429 Too Many Requests the other common choice. Middleware panics, when it is
// built, if code is not a 4xx or 5xx status.
func WithRejectionStatus(code int) ServerOption {
	return serverOption(func(o *serverOptions) { o.status = code })
}

// WithRetryAfter sets the Retry-After header of Middleware's rejections, rounded up to
// whole seconds and at most 2147483647: 1 second by default. A d of zero or less sends no
// Retry-After header.
func WithRetryAfter(d time.Duration) ServerOption {
	return serverOption(func(o *serverOptions) { o.retryAfter = d })
}

// WithServerOutcome replaces DefaultServerOutcome in Middleware. It is called with the
// request and the status the handler wrote (200 if it wrote none) after the handler
// returns; a handler that panics frees its slot without calling it, and a function that
// panics frees the slot without a sample. An Outcome other than Sample, Drop, Ignore and
// Departed is Ignore. A request whose client went away is f's to judge: return
// adaptivelimit.Departed for it, not Drop, which any client could then send at will.
// Middleware panics, when it is built, if f is nil.
func WithServerOutcome(f func(r *http.Request, status int) adaptivelimit.Outcome) ServerOption {
	return serverOption(func(o *serverOptions) { o.outcome = f })
}

// WithClientOutcome replaces DefaultClientOutcome in Transport. It is called with the base
// transport's response or error, and again with the error of a body read that fails.
// Transport panics, when it is built, if f is nil.
func WithClientOutcome(f func(resp *http.Response, err error) adaptivelimit.Outcome) ClientOption {
	return clientOption(func(o *clientOptions) { o.outcome = f })
}

func newServerOptions(l *adaptivelimit.Limiter, opts []ServerOption) serverOptions {
	mustLimiter(l)
	o := serverOptions{
		options:    defaultOptions(),
		status:     http.StatusServiceUnavailable,
		retryAfter: time.Second,
		outcome:    DefaultServerOutcome,
	}
	for _, opt := range opts {
		opt.server(&o)
	}
	if o.status < 400 || o.status > 599 {
		panic(fmt.Sprintf("httplimit: rejection status %d is not a 4xx or 5xx status", o.status))
	}
	mustSet(o.outcome != nil, "WithServerOutcome")
	mustSet(o.bypass != nil, "WithBypass")
	if err := o.class.Bind(l, "HeaderClass"); err != nil {
		panic("httplimit: " + err.Error())
	}
	return o
}

func newClientOptions(l *adaptivelimit.Limiter, opts []ClientOption) clientOptions {
	mustLimiter(l)
	o := clientOptions{options: defaultOptions(), outcome: DefaultClientOutcome, header: http.CanonicalHeaderKey(DefaultClassHeader)}
	for _, opt := range opts {
		opt.client(&o)
	}
	mustSet(o.outcome != nil, "WithClientOutcome")
	mustSet(o.bypass != nil, "WithBypass")
	return o
}

func defaultOptions() options { return options{bypass: DefaultBypass} }

func mustLimiter(l *adaptivelimit.Limiter) {
	if l == nil {
		panic("httplimit: nil limiter")
	}
}

// mustSet panics, naming the option, where it was given a nil function.
func mustSet(ok bool, option string) {
	if !ok {
		panic("httplimit: " + option + "(nil)")
	}
}
