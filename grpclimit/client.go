package grpclimit

import (
	"context"
	"errors"
	"io"
	"sync/atomic"

	"google.golang.org/grpc"

	"github.com/resilience4cata/adaptivelimit"
)

// UnaryClientInterceptor returns an interceptor that runs each unary call inside l, for a
// gRPC dependency. A call that finds the limit full fails at once, without being sent, with
// an error that matches adaptivelimit.ErrLimitExceeded and has the rejection code's status.
func UnaryClientInterceptor(l *adaptivelimit.Limiter, opts ...Option) grpc.UnaryClientInterceptor {
	o := newOptions(opts)
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, callOpts ...grpc.CallOption) error {
		if o.bypassed(ctx, method) {
			return invoker(ctx, method, req, reply, cc, callOpts...)
		}
		ctx, class := o.sendClass(ctx)
		p, err := l.AcquireClass(class)
		if err != nil {
			return rejected(err, o.code)
		}
		finished := false
		defer func() {
			if !finished {
				p.Cancel()
			}
		}()
		err = invoker(ctx, method, req, reply, cc, callOpts...)
		finished = true
		p.Finish(o.classify(err))
		return err
	}
}

// StreamClientInterceptor returns an interceptor that runs each streaming call inside l. The
// stream holds its slot until it ends: RecvMsg returns io.EOF or an error (or, on a stream
// whose server sends one message, returns it), SendMsg fails, or the stream's context is
// done. A stream that is left open holds its slot, as gRPC holds its resources.
func StreamClientInterceptor(l *adaptivelimit.Limiter, opts ...Option) grpc.StreamClientInterceptor {
	o := newOptions(opts)
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, callOpts ...grpc.CallOption) (grpc.ClientStream, error) {
		if o.bypassed(ctx, method) {
			return streamer(ctx, desc, cc, method, callOpts...)
		}
		ctx, class := o.sendClass(ctx)
		p, err := l.AcquireClass(class)
		if err != nil {
			return nil, rejected(err, o.code)
		}
		finished := false
		defer func() {
			if !finished {
				p.Cancel()
			}
		}()
		cs, err := streamer(ctx, desc, cc, method, callOpts...)
		finished = true
		if err != nil {
			p.Finish(o.classify(err))
			return nil, err
		}
		s := &clientStream{ClientStream: cs, p: p, classify: o.classify, oneReply: !desc.ServerStreams}
		s.stop = context.AfterFunc(ctx, func() { s.finish(s.classify(ctx.Err())) })
		return s, nil
	}
}

type clientStream struct {
	grpc.ClientStream
	p        adaptivelimit.Permit
	classify func(error) adaptivelimit.Outcome
	oneReply bool        // the server sends one message, after which the stream is over
	stop     func() bool // stops the finish when the context is done
	finished atomic.Bool
}

func (s *clientStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	switch {
	case err == io.EOF:
		s.end(adaptivelimit.Sample)
	case err != nil:
		s.end(s.classify(err))
	case s.oneReply:
		s.end(adaptivelimit.Sample)
	}
	return err
}

func (s *clientStream) SendMsg(m any) error {
	err := s.ClientStream.SendMsg(m)
	if err != nil && !errors.Is(err, io.EOF) { // io.EOF: the status comes from RecvMsg
		s.end(s.classify(err))
	}
	return err
}

// end finishes the stream before its context is done.
func (s *clientStream) end(o adaptivelimit.Outcome) {
	s.stop()
	s.finish(o)
}

func (s *clientStream) finish(o adaptivelimit.Outcome) {
	if s.finished.CompareAndSwap(false, true) {
		s.p.Finish(o)
	}
}
