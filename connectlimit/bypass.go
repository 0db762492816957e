package connectlimit

import (
	"context"
	"strings"

	"connectrpc.com/connect"
)

// WithBypass makes the interceptor, a handler's and a client's, pass the calls that f
// reports true for straight through, neither limited nor measured. It replaces
// DefaultBypass, which f can call to keep health checks out of the limit too. f is called
// first, with nothing held. NewInterceptor panics if f is nil.
func WithBypass(f func(ctx context.Context, spec connect.Spec) bool) Option {
	return func(o *options) { o.bypass = f }
}

// DefaultBypass reports true for the procedures of the gRPC health service
// (/grpc.health.v1.Health/, which connectrpc.com/grpchealth serves), which the interceptor
// bypasses by default: a health check that the limit rejects would take an overloaded server
// out of rotation, and its latency says nothing about the service's.
func DefaultBypass(_ context.Context, spec connect.Spec) bool {
	return strings.HasPrefix(spec.Procedure, "/grpc.health.v1.Health/")
}
