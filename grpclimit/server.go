package grpclimit

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/integration"
)

// PushbackKey is the trailer of a server's rejections that tells gRPC clients how many
// milliseconds to wait before they retry.
const PushbackKey = "grpc-retry-pushback-ms"

// UnaryServerInterceptor returns an interceptor that runs each unary call inside l. A call
// that finds the limit full is rejected without calling the handler; where l has a MaxWait,
// it waits for a slot that long at most, and no longer than its context lasts. The handler's
// latency is the call's latency, and its error decides the outcome (DefaultOutcome, see
// WithOutcome). A handler or an outcome function that panics frees the slot without a
// sample, and the panic goes on (gRPC does not recover it: a recovery interceptor outside
// this one may). It panics if l is nil or an option is invalid.
func UnaryServerInterceptor(l *adaptivelimit.Limiter, opts ...ServerOption) grpc.UnaryServerInterceptor {
	s := newServer(l, opts)
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		method := fullMethod(info)
		if s.o.bypass(ctx, method) {
			return handler(ctx, req)
		}
		err = s.run(ctx, method, func(md metadata.MD) error { return grpc.SetTrailer(ctx, md) }, func(ctx context.Context) error {
			resp, err = handler(ctx, req)
			return err
		})
		return resp, err
	}
}

// StreamServerInterceptor returns an interceptor that runs each streaming call inside l, as
// UnaryServerInterceptor does: the stream holds its slot until the handler returns.
func StreamServerInterceptor(l *adaptivelimit.Limiter, opts ...ServerOption) grpc.StreamServerInterceptor {
	s := newServer(l, opts)
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if s.o.bypassedStream(ss, info) {
			return handler(srv, ss)
		}
		streamCtx := streamContext(ss)
		return s.run(streamCtx, streamMethod(info), func(md metadata.MD) error { ss.SetTrailer(md); return nil }, func(ctx context.Context) error {
			if ctx != streamCtx { // the class's context
				ss = &classStream{ServerStream: ss, ctx: ctx}
			}
			return handler(srv, ss)
		})
	}
}

type server struct {
	l        *adaptivelimit.Limiter
	o        serverOptions
	pushback string
}

func newServer(l *adaptivelimit.Limiter, opts []ServerOption) *server {
	o := newServerOptions(l, opts)
	return &server{l: l, o: o, pushback: pushbackMillis(o.pushback)}
}

// run runs handler inside the limit, for the call's class, with the context that carries it,
// or rejects the call with the pushback trailer.
func (s *server) run(ctx context.Context, method string, setTrailer func(metadata.MD) error, handler func(ctx context.Context) error) error {
	ctx, p, err := s.o.class.Acquire(ctx, call{ctx, method})
	if err != nil {
		if s.pushback != "" {
			_ = setTrailer(metadata.Pairs(PushbackKey, s.pushback))
		}
		return rejected(err, s.o.code)
	}
	defer p.Cancel() // the handler or the outcome function panicked: Finish has not cleared p
	err = handler(ctx)
	p.Finish(integration.ServerOutcome(ctx, s.o.outcome(err)))
	return err
}
