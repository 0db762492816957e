package grpclimit_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/grpclimit"
	"github.com/resilience4cata/adaptivelimit/limittest"
)

// callbackLimit is the fixed limit of TestCallbacksNeverLeakSlots's limiters.
const callbackLimit = 2

// hostile is what a case puts in place of what the user gives an interceptor: options (the
// classifier), and interceptors inside grpclimit's, which stand for the handler on a server
// and for the invoker or streamer on a client. A nil one passes the call on.
type hostile struct {
	opts         []grpclimit.Option
	serverOpts   []grpclimit.ServerOption
	unaryServer  grpc.UnaryServerInterceptor
	streamServer grpc.StreamServerInterceptor
	unaryClient  grpc.UnaryClientInterceptor
	streamClient grpc.StreamClientInterceptor
	abandon      bool // the client leaves its stream open and ends it through its context
}

// Every interceptor, unary and streaming, on the server and on the client, with each
// function the user gives it (handler, invoker or streamer, the stream they return, the
// classifier) replaced by one that panics, returns garbage, or blocks until the call's
// context ends: afterwards no call holds a slot, and the limit admits exactly its calls
// again. The servers run behind a recovery interceptor, as they do in production, since
// gRPC does not recover a handler's panic. The integrations of other stacks mirror this
// test.
func TestCallbacksNeverLeakSlots(t *testing.T) {
	panics := func(error) adaptivelimit.Outcome { panic("classifier") }
	garbage := func(error) adaptivelimit.Outcome { return -1 }
	for _, tc := range []struct {
		name   string
		server bool
		make   func(c *call) hostile
	}{
		{"server/handler panics", true, func(*call) hostile {
			return hostile{
				unaryServer: func(context.Context, any, *grpc.UnaryServerInfo, grpc.UnaryHandler) (any, error) {
					panic("handler")
				},
				streamServer: func(any, grpc.ServerStream, *grpc.StreamServerInfo, grpc.StreamHandler) error {
					panic("handler")
				},
			}
		}},
		{"server/handler returns garbage", true, func(*call) hostile {
			return hostile{
				unaryServer: func(context.Context, any, *grpc.UnaryServerInfo, grpc.UnaryHandler) (any, error) {
					return nil, nil
				},
				streamServer: func(any, grpc.ServerStream, *grpc.StreamServerInfo, grpc.StreamHandler) error {
					return status.Error(codes.Code(1000), "garbage")
				},
			}
		}},
		{"server/handler blocks", true, func(c *call) hostile {
			return hostile{
				unaryServer: func(ctx context.Context, _ any, _ *grpc.UnaryServerInfo, _ grpc.UnaryHandler) (any, error) {
					c.blockOn(ctx)
					return nil, ctx.Err()
				},
				streamServer: func(_ any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, _ grpc.StreamHandler) error {
					c.blockOn(ss.Context())
					return ss.Context().Err()
				},
			}
		}},
		{"server/classifier panics", true, func(*call) hostile {
			return hostile{opts: []grpclimit.Option{grpclimit.WithOutcome(panics)}}
		}},
		{"server/class classifier panics", true, func(*call) hostile {
			return hostile{serverOpts: []grpclimit.ServerOption{grpclimit.WithClassFrom(func(context.Context, string) string { panic("class") })}}
		}},
		{"server/bypass panics", true, func(*call) hostile {
			return hostile{opts: []grpclimit.Option{grpclimit.WithBypass(func(context.Context, string) bool { panic("bypass") })}}
		}},
		{"server/classifier returns garbage", true, func(*call) hostile {
			return hostile{opts: []grpclimit.Option{grpclimit.WithOutcome(garbage)}}
		}},
		{"server/classifier blocks", true, func(c *call) hostile {
			return hostile{opts: []grpclimit.Option{grpclimit.WithOutcome(c.blockingClassifier)}}
		}},

		{"client/invoker panics", false, func(*call) hostile {
			return hostile{
				unaryClient: func(context.Context, string, any, any, *grpc.ClientConn, grpc.UnaryInvoker, ...grpc.CallOption) error {
					panic("invoker")
				},
				streamClient: func(context.Context, *grpc.StreamDesc, *grpc.ClientConn, string, grpc.Streamer, ...grpc.CallOption) (grpc.ClientStream, error) {
					panic("streamer")
				},
			}
		}},
		{"client/invoker returns garbage", false, func(*call) hostile {
			return hostile{
				unaryClient: func(context.Context, string, any, any, *grpc.ClientConn, grpc.UnaryInvoker, ...grpc.CallOption) error {
					return status.Error(codes.Code(1000), "garbage")
				},
				streamClient: func(context.Context, *grpc.StreamDesc, *grpc.ClientConn, string, grpc.Streamer, ...grpc.CallOption) (grpc.ClientStream, error) {
					return nil, nil
				},
			}
		}},
		{"client/invoker blocks", false, func(c *call) hostile {
			return hostile{
				unaryClient: func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ grpc.UnaryInvoker, _ ...grpc.CallOption) error {
					c.blockOn(ctx)
					return ctx.Err()
				},
				streamClient: func(ctx context.Context, _ *grpc.StreamDesc, _ *grpc.ClientConn, _ string, _ grpc.Streamer, _ ...grpc.CallOption) (grpc.ClientStream, error) {
					c.blockOn(ctx)
					return nil, ctx.Err()
				},
			}
		}},
		{"client/stream panics", false, func(*call) hostile {
			return hostile{
				streamClient: func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
					cs, err := streamer(ctx, desc, cc, method, opts...)
					return panickyStream{cs}, err
				},
			}
		}},
		{"client/classifier panics", false, func(*call) hostile {
			return hostile{opts: []grpclimit.Option{grpclimit.WithOutcome(panics)}}
		}},
		{"client/bypass panics", false, func(*call) hostile {
			return hostile{opts: []grpclimit.Option{grpclimit.WithBypass(func(context.Context, string) bool { panic("bypass") })}}
		}},
		{"client/classifier panics on an abandoned stream", false, func(*call) hostile {
			return hostile{opts: []grpclimit.Option{grpclimit.WithOutcome(panics)}, abandon: true}
		}},
		{"client/classifier returns garbage", false, func(*call) hostile {
			return hostile{opts: []grpclimit.Option{grpclimit.WithOutcome(garbage)}}
		}},
		{"client/classifier blocks", false, func(c *call) hostile {
			return hostile{opts: []grpclimit.Option{grpclimit.WithOutcome(c.blockingClassifier)}}
		}},
	} {
		for _, kind := range []string{"unary", "stream"} {
			t.Run(tc.name+"/"+kind, func(t *testing.T) {
				l, _ := limittest.Fixed(t, "echo", callbackLimit)
				c := newCall()
				defer c.end()
				h := tc.make(c)
				if tc.server {
					c.serve(t, l, kind, h)
				} else {
					c.invoke(t, l, kind, h)
				}
				limittest.RequireNoSlotLost(t, l, callbackLimit)
			})
		}
	}

	// Each interceptor waits for a slot where the limiter has a MaxWait, and its call's
	// context ends while it waits: a server's through the client's cancellation.
	critical := []grpclimit.ServerOption{grpclimit.WithClassFrom(func(context.Context, string) string { return "critical" })}
	for _, tc := range []struct {
		name   string
		server bool
		h      hostile
	}{
		{"server", true, hostile{}},
		{"server/classed", true, hostile{serverOpts: critical}},
		{"client", false, hostile{}},
	} {
		for _, kind := range []string{"unary", "stream"} {
			t.Run(tc.name+"/context ends while waiting/"+kind, func(t *testing.T) {
				l, _ := limittest.FixedWaiting(t, "echo", callbackLimit)
				limittest.WhileWaiting(t, l, callbackLimit, func(waiting chan struct{}) {
					c := newCallOn(waiting, callbackLimit)
					defer c.end()
					if tc.server {
						c.serve(t, l, kind, tc.h)
					} else {
						c.invoke(t, l, kind, tc.h)
					}
				})
				limittest.RequireNoSlotLost(t, l, callbackLimit)
			})
		}
	}
}

// call is one call of TestCallbacksNeverLeakSlots. Its context ends once a callback has
// blocked.
type call struct {
	ctx     context.Context
	end     context.CancelFunc
	blocked chan struct{}
	held    int // slots that the test holds
}

func newCall() *call { return newCallOn(make(chan struct{}, 1), 0) }

// newCallOn returns a call whose context ends once blocked receives, while the test holds
// held slots.
func newCallOn(blocked chan struct{}, held int) *call {
	ctx, cancel := context.WithCancel(context.Background())
	c := &call{ctx: ctx, end: cancel, blocked: blocked, held: held}
	go func() {
		select {
		case <-c.blocked:
			cancel()
		case <-ctx.Done():
		}
	}()
	return c
}

// blockOn blocks until ctx, which ends with the call's, is done.
func (c *call) blockOn(ctx context.Context) {
	c.blocked <- struct{}{}
	<-ctx.Done()
}

func (c *call) blockingClassifier(error) adaptivelimit.Outcome {
	c.blockOn(c.ctx)
	return adaptivelimit.Sample
}

// answer is the echo service's answer in TestCallbacksNeverLeakSlots: an error, so that a
// client stream's classifier is called too.
func answer(context.Context, string) error { return status.Error(codes.Unavailable, "busy") }

// serve makes the call to a loopback server whose interceptors are grpclimit's, with h
// inside them and a recovery interceptor outside, and returns once the server's
// interceptors have returned.
func (c *call) serve(t *testing.T, l *adaptivelimit.Limiter, kind string, h hostile) {
	served := make(chan struct{}, 1)
	recoverUnary := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer recoverAs(&err, served)
		return handler(ctx, req)
	}
	recoverStream := func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer recoverAs(&err, served)
		return handler(srv, ss)
	}
	opts := h.serverOpts
	for _, o := range h.opts {
		opts = append(opts, o)
	}
	unaries := []grpc.UnaryServerInterceptor{recoverUnary, grpclimit.UnaryServerInterceptor(l, opts...)}
	if h.unaryServer != nil {
		unaries = append(unaries, h.unaryServer)
	}
	streams := []grpc.StreamServerInterceptor{recoverStream, grpclimit.StreamServerInterceptor(l, opts...)}
	if h.streamServer != nil {
		streams = append(streams, h.streamServer)
	}
	cc := dial(t, "tcp", &echo{answer: answer}, []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(unaries...), grpc.ChainStreamInterceptor(streams...),
	})
	c.run(cc, kind, false)
	<-served
}

// recoverAs turns a panic into the call's error, as a server's recovery interceptor does,
// and says that the call was served.
func recoverAs(err *error, served chan<- struct{}) {
	if r := recover(); r != nil {
		*err = status.Errorf(codes.Internal, "panic: %v", r)
	}
	served <- struct{}{}
}

// invoke makes the call through grpclimit's client interceptors with h inside them, to a
// loopback server, recovering what panics as a caller would, and returns once the call's
// slot is free or a few seconds have passed: the slot of a stream abandoned through its
// context is freed on a goroutine of context.AfterFunc.
func (c *call) invoke(t *testing.T, l *adaptivelimit.Limiter, kind string, h hostile) {
	var opts []grpclimit.ClientOption
	for _, o := range h.opts {
		opts = append(opts, o)
	}
	unaries := []grpc.UnaryClientInterceptor{grpclimit.UnaryClientInterceptor(l, opts...)}
	if h.unaryClient != nil {
		unaries = append(unaries, h.unaryClient)
	}
	streams := []grpc.StreamClientInterceptor{grpclimit.StreamClientInterceptor(l, opts...)}
	if h.streamClient != nil {
		streams = append(streams, h.streamClient)
	}
	cc := dial(t, "tcp", &echo{answer: answer}, nil,
		grpc.WithChainUnaryInterceptor(unaries...), grpc.WithChainStreamInterceptor(streams...))
	c.run(cc, kind, h.abandon)
	c.end()
	for deadline := time.Now().Add(5 * time.Second); l.InFlight() > c.held && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}

// run makes a unary call, or a bidirectional stream that sends a message and reads to its
// end unless it is abandoned, on the call's context.
func (c *call) run(cc *grpc.ClientConn, kind string, abandon bool) {
	if kind == "unary" {
		recovered(func() { _ = unary(c.ctx, cc, "hi") })
		return
	}
	var cs grpc.ClientStream
	recovered(func() { cs, _ = cc.NewStream(c.ctx, &bidiDesc, bidiMethod) })
	if cs == nil || abandon {
		return
	}
	recovered(func() {
		_ = cs.SendMsg(wrapperspb.String("a"))
		_ = cs.CloseSend()
		for cs.RecvMsg(new(wrapperspb.StringValue)) == nil {
		}
	})
}

func recovered(f func()) {
	defer func() { _ = recover() }()
	f()
}

// panickyStream is a client stream whose RecvMsg panics.
type panickyStream struct{ grpc.ClientStream }

func (panickyStream) RecvMsg(any) error { panic("RecvMsg") }
