package httplimit

import (
	"net/http"
	"strings"
)

// WithBypass makes Middleware and Transport pass the requests that f reports true for
// straight through, neither limited nor measured: health checks, admin endpoints, CORS
// preflights. It replaces DefaultBypass, which f can call to keep its requests out too. f is
// called first, with nothing held. Middleware and Transport panic, when they are built, if f
// is nil.
func WithBypass(f func(*http.Request) bool) Option {
	return bothOption(func(o *options) { o.bypass = f })
}

// DefaultBypass reports true for the requests to the gRPC health service
// (/grpc.health.v1.Health/, which connect and gRPC servers behind Middleware serve), as
// grpclimit's and connectlimit's DefaultBypass do: a health check that the limit rejects
// would take an overloaded server out of rotation, and its latency says nothing about the
// service's.
func DefaultBypass(r *http.Request) bool {
	return r.URL != nil && strings.HasPrefix(r.URL.Path, "/grpc.health.v1.Health/")
}
