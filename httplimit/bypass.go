package httplimit

import "net/http"

// WithBypass makes Middleware and Transport pass the requests that f reports true for
// straight through, neither limited nor measured: health checks, admin endpoints, CORS
// preflights. f is called first, with nothing held.
func WithBypass(f func(*http.Request) bool) Option {
	return func(o *options) { o.bypass = f }
}

// bypassed reports whether r goes around the limiter.
func (c *classOptions) bypassed(r *http.Request) bool { return c.bypass != nil && c.bypass(r) }
