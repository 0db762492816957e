package httplimit

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/resilience4cata/adaptivelimit"
)

// An Option configures Middleware or Transport.
type Option func(*options)

type options struct {
	status     int
	retryAfter time.Duration
	server     func(r *http.Request, status int) adaptivelimit.Outcome
	client     func(resp *http.Response, err error) adaptivelimit.Outcome
	classOptions
}

// WithRejectionStatus sets the status of Middleware's rejections: 503 Service Unavailable
// by default, 429 Too Many Requests the other common choice. Middleware panics, when it is
// built, if code is not a 4xx or 5xx status.
func WithRejectionStatus(code int) Option {
	return func(o *options) { o.status = code }
}

// WithRetryAfter sets the Retry-After header of Middleware's rejections, rounded up to
// whole seconds: 1 second by default. A d of zero or less sends no Retry-After header.
func WithRetryAfter(d time.Duration) Option {
	return func(o *options) { o.retryAfter = d }
}

// WithServerClassifier replaces DefaultServerClassifier in Middleware. It is called with
// the request and the status the handler wrote (200 if it wrote none) after the handler
// returns; a handler that panics frees its slot without calling it, and a classifier that
// panics frees the slot without a sample. An Outcome other than Sample, Drop and Ignore is
// Ignore. Middleware panics, when it is built, if f is nil; so does Transport for
// WithClientClassifier.
func WithServerClassifier(f func(r *http.Request, status int) adaptivelimit.Outcome) Option {
	return func(o *options) { o.server = f }
}

// WithClientClassifier replaces DefaultClientClassifier in Transport. It is called with the
// base transport's response or error, and again with the error of a body read that fails.
func WithClientClassifier(f func(resp *http.Response, err error) adaptivelimit.Outcome) Option {
	return func(o *options) { o.client = f }
}

func newOptions(opts []Option) options {
	o := options{
		status:     http.StatusServiceUnavailable,
		retryAfter: time.Second,
		server:     DefaultServerClassifier,
		client:     DefaultClientClassifier,
	}
	for _, opt := range opts {
		opt(&o)
	}
	if o.status < 400 || o.status > 599 {
		panic(fmt.Sprintf("httplimit: rejection status %d is not a 4xx or 5xx status", o.status))
	}
	if o.server == nil || o.client == nil {
		panic("httplimit: nil classifier")
	}
	return o
}

// retryAfterHeader returns the Retry-After value for d, or nil for no header.
func retryAfterHeader(d time.Duration) []string {
	if d <= 0 {
		return nil
	}
	seconds := (d + time.Second - 1) / time.Second
	return []string{strconv.FormatInt(int64(seconds), 10)}
}
