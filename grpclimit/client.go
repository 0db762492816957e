package grpclimit

import (
	"context"

	"google.golang.org/grpc"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/integration"
)

// UnaryClientInterceptor returns an interceptor that runs each unary call inside l, for a
// gRPC dependency, for the class of the call's context, which it sends in the
// x-criticality metadata in place of any value the outgoing metadata holds; a call whose
// context has no class goes without that key (see WithClassMetadata). A call that finds
// the limit full fails without being sent, with an error that matches
// adaptivelimit.ErrLimitExceeded and has the rejection code's status: at once, or, where l
// has a MaxWait, after waiting that long at most, and no longer than its context lasts. An
// invoker or an outcome function that panics frees the slot without a sample, and the
// panic goes on to the caller. It panics if l is nil or an option is invalid.
func UnaryClientInterceptor(l *adaptivelimit.Limiter, opts ...ClientOption) grpc.UnaryClientInterceptor {
	o := newClientOptions(l, opts)
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, callOpts ...grpc.CallOption) error {
		if o.bypass(ctx, method) {
			return invoker(o.sendClass(ctx), method, req, reply, cc, callOpts...)
		}
		p, err := l.AcquireContext(ctx)
		if err != nil {
			return rejected(err, o.code)
		}
		defer p.Cancel() // the invoker or the outcome function panicked: Finish has not cleared p
		err = invoker(o.sendClass(ctx), method, req, reply, cc, callOpts...)
		p.Finish(o.outcome(err))
		return err
	}
}

// StreamClientInterceptor returns an interceptor that runs each streaming call inside l. The
// stream holds its slot until it ends: RecvMsg returns io.EOF or an error (or, on a stream
// whose server sends one message, returns it), SendMsg fails, or the stream's context is
// done. A stream that is left open holds its slot, as gRPC holds its resources.
//
// A stream whose context is done is finished on the goroutine that context.AfterFunc
// starts, where nothing could recover a panic: an outcome function that panics there frees the
// slot without a sample, and its panic is dropped rather than let it end the process.
func StreamClientInterceptor(l *adaptivelimit.Limiter, opts ...ClientOption) grpc.StreamClientInterceptor {
	o := newClientOptions(l, opts)
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, callOpts ...grpc.CallOption) (grpc.ClientStream, error) {
		if o.bypass(ctx, method) {
			return streamer(o.sendClass(ctx), desc, cc, method, callOpts...)
		}
		p, err := l.AcquireContext(ctx)
		if err != nil {
			return nil, rejected(err, o.code)
		}
		defer p.Cancel() // the streamer or the outcome function panicked, or the stream holds p
		ctx = o.sendClass(ctx)
		cs, err := streamer(ctx, desc, cc, method, callOpts...)
		if err != nil {
			p.Finish(o.outcome(err))
			return nil, err
		}
		if cs == nil {
			return nil, nil // a streamer that broke its contract: nothing to wrap
		}
		s := &clientStream{ClientStream: cs, oneReply: !desc.ServerStreams}
		s.p = integration.NewStreamPermit(ctx, &p, o.outcome) // the stream finishes p
		return s, nil
	}
}

type clientStream struct {
	grpc.ClientStream
	p        *integration.StreamPermit
	oneReply bool // the server sends one message, after which the stream is over
}

func (s *clientStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	s.p.Received(err, s.oneReply)
	return err
}

func (s *clientStream) SendMsg(m any) error {
	err := s.ClientStream.SendMsg(m)
	s.p.Sent(err)
	return err
}
