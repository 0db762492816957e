package grpclimit

import (
	"context"
	"strings"

	"google.golang.org/grpc"
)

// WithBypass makes the interceptors, servers' and clients', pass the calls that f reports
// true for straight through, neither limited nor measured. It replaces DefaultBypass, which
// f can call to keep health checks out of the limit too. f is called first, with nothing
// held. The interceptor panics, when it is built, if f is nil.
func WithBypass(f func(ctx context.Context, fullMethod string) bool) Option {
	return bothOption(func(o *options) { o.bypass = f })
}

// DefaultBypass reports true for the methods of the gRPC health service
// (/grpc.health.v1.Health/), which the interceptors bypass by default: a health check that
// the limit rejects would take an overloaded server out of rotation, and its latency says
// nothing about the service's.
func DefaultBypass(_ context.Context, fullMethod string) bool {
	return strings.HasPrefix(fullMethod, "/grpc.health.v1.Health/")
}

// bypassedStream reports whether a stream to a server goes around the limiter.
func (o *options) bypassedStream(ss grpc.ServerStream, info *grpc.StreamServerInfo) bool {
	return o.bypass(streamContext(ss), streamMethod(info))
}

// fullMethod is the method of a unary call to a server: "" where the caller of the
// interceptor gave no info.
func fullMethod(info *grpc.UnaryServerInfo) string {
	if info == nil {
		return ""
	}
	return info.FullMethod
}

func streamMethod(info *grpc.StreamServerInfo) string {
	if info == nil {
		return ""
	}
	return info.FullMethod
}

// streamContext is the context of a stream to a server, and Background where the caller of
// the interceptor gave no stream.
func streamContext(ss grpc.ServerStream) context.Context {
	if ss == nil {
		return context.Background()
	}
	return ss.Context()
}
