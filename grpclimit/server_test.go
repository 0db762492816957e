package grpclimit_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/resilience4cata/adaptivelimit/grpclimit"
	"github.com/resilience4cata/adaptivelimit/limittest"
)

// A full limit rejects unary and streaming calls with the rejection code and the pushback
// trailer, without calling the handler.
func TestServerRejects(t *testing.T) {
	for _, network := range networks {
		for _, tc := range []struct {
			name     string
			opts     []grpclimit.ServerOption
			code     codes.Code
			pushback []string
		}{
			{"default", nil, codes.ResourceExhausted, []string{"1000"}},
			{"options", []grpclimit.ServerOption{grpclimit.WithRejectionCode(codes.Unavailable), grpclimit.WithPushback(1500 * time.Microsecond)}, codes.Unavailable, []string{"2"}},
			{"no pushback", []grpclimit.ServerOption{grpclimit.WithPushback(0)}, codes.ResourceExhausted, nil},
			{"pushback clamped", []grpclimit.ServerOption{grpclimit.WithPushback(math.MaxInt64)}, codes.ResourceExhausted, []string{"2147483647"}},
		} {
			t.Run(network+"/"+tc.name, func(t *testing.T) {
				l, _ := limittest.Fixed(t, "echo", 1)
				var calls atomic.Int64
				e := &echo{answer: func(context.Context, string) error { calls.Add(1); return nil }}
				cc := dial(t, network, e, []grpc.ServerOption{
					grpc.UnaryInterceptor(grpclimit.UnaryServerInterceptor(l, tc.opts...)),
					grpc.StreamInterceptor(grpclimit.StreamServerInterceptor(l, tc.opts...)),
				})
				held, err := l.Acquire()
				require.NoError(t, err)

				var trailer metadata.MD
				err = unary(context.Background(), cc, "hi", grpc.Trailer(&trailer))
				require.Equal(t, tc.code, status.Code(err), "%v", err)
				require.Contains(t, status.Convert(err).Message(), `limit of "echo" exceeded`)
				require.Equal(t, tc.pushback, trailer.Get(grpclimit.PushbackKey))

				cs, err := cc.NewStream(context.Background(), &bidiDesc, bidiMethod)
				require.NoError(t, err)
				err = cs.RecvMsg(new(wrapperspb.StringValue))
				require.Equal(t, tc.code, status.Code(err), "%v", err)
				require.Equal(t, tc.pushback, cs.Trailer().Get(grpclimit.PushbackKey))

				require.Zero(t, calls.Load(), "the handlers are not called")
				require.Equal(t, uint64(2), l.Snapshot().Rejected)
				held.Done(nil)
				require.NoError(t, unary(context.Background(), cc, "hi"))
				require.Equal(t, int64(1), calls.Load())
			})
		}
	}
}

// A nil limiter, a nil function or a bad code panics when an interceptor is built, naming the
// package and the option, on each of the four, not at the first call.
func TestRejectsBadOptions(t *testing.T) {
	l, _ := limittest.Fixed(t, "echo", 1)
	for want, opts := range map[string][]grpclimit.Option{
		"grpclimit: nil limiter":                       nil,
		"grpclimit: rejection code OK is not an error": {grpclimit.WithRejectionCode(codes.OK)},
		"grpclimit: WithOutcome(nil)":                  {grpclimit.WithOutcome(nil)},
		"grpclimit: WithBypass(nil)":                   {grpclimit.WithBypass(nil)},
	} {
		limiter := l
		if opts == nil {
			limiter = nil
		}
		server, client := make([]grpclimit.ServerOption, len(opts)), make([]grpclimit.ClientOption, len(opts))
		for i, o := range opts {
			server[i], client[i] = o, o
		}
		require.PanicsWithValue(t, want, func() { grpclimit.UnaryServerInterceptor(limiter, server...) })
		require.PanicsWithValue(t, want, func() { grpclimit.StreamServerInterceptor(limiter, server...) })
		require.PanicsWithValue(t, want, func() { grpclimit.UnaryClientInterceptor(limiter, client...) })
		require.PanicsWithValue(t, want, func() { grpclimit.StreamClientInterceptor(limiter, client...) })
	}
	require.PanicsWithValue(t, "grpclimit: WithClassFrom(nil)", func() {
		grpclimit.UnaryServerInterceptor(l, grpclimit.WithClassFrom((func(context.Context, string) string)(nil)))
	})
}

// The handler's error, in unary and streaming calls, and what the limiter makes of it.
func TestServerClassifies(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, "sample"},
		{status.Error(codes.NotFound, "no such order"), "none"},
		{status.Error(codes.InvalidArgument, "bad order"), "none"},
		{status.Error(codes.Internal, "bug"), "none"},
		{status.Error(codes.ResourceExhausted, "full"), "drop"},
		{status.Error(codes.Unavailable, "down"), "drop"},
		{status.Error(codes.DeadlineExceeded, "slow"), "drop"},
		{context.DeadlineExceeded, "drop"},
		{context.Canceled, "none"},
	} {
		for _, kind := range []string{"unary", "stream"} {
			t.Run(kind+"/"+fmt.Sprint(tc.err), func(t *testing.T) {
				l, clock := limittest.Fixed(t, "echo", 1)
				e := &echo{answer: func(context.Context, string) error {
					clock.Advance(time.Second) // the handler takes 1 s; the window is over
					return tc.err
				}}
				cc := dial(t, "tcp", e, []grpc.ServerOption{
					grpc.UnaryInterceptor(grpclimit.UnaryServerInterceptor(l)),
					grpc.StreamInterceptor(grpclimit.StreamServerInterceptor(l)),
				})
				var err error
				if kind == "unary" {
					err = unary(context.Background(), cc, "hi")
				} else {
					err = bidi(t, cc, "a", "b")
				}
				want := status.Code(tc.err)
				if want == codes.Unknown { // a context error: the server sends its code
					want = status.FromContextError(tc.err).Code()
				}
				require.Equal(t, want, status.Code(err), "%v", err)
				require.Equal(t, tc.want, limittest.Classified(t, l))
				if tc.want != "none" {
					require.Equal(t, time.Second, l.Snapshot().Last.MeanLatency, "the handler's latency")
				}
			})
		}
	}
}

// bidi sends msgs on a Bidi stream, reads their echoes, closes its side and returns the
// stream's status.
func bidi(t *testing.T, cc *grpc.ClientConn, msgs ...string) error {
	t.Helper()
	cs, err := cc.NewStream(context.Background(), &bidiDesc, bidiMethod)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		require.NoError(t, cs.SendMsg(wrapperspb.String(m)))
		got := new(wrapperspb.StringValue)
		require.NoError(t, cs.RecvMsg(got))
		require.Equal(t, m, got.GetValue())
	}
	require.NoError(t, cs.CloseSend())
	err = cs.RecvMsg(new(wrapperspb.StringValue))
	require.Error(t, err)
	if err == io.EOF { // the stream ended with OK
		return nil
	}
	return err
}

// A streaming call holds its server slot until its handler returns.
func TestServerStreamHoldsItsSlot(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			l, _ := limittest.Fixed(t, "echo", 1)
			cc := dial(t, network, &echo{answer: func(context.Context, string) error { return nil }}, []grpc.ServerOption{
				grpc.UnaryInterceptor(grpclimit.UnaryServerInterceptor(l)),
				grpc.StreamInterceptor(grpclimit.StreamServerInterceptor(l)),
			})
			cs, err := cc.NewStream(context.Background(), &bidiDesc, bidiMethod)
			require.NoError(t, err)
			require.NoError(t, cs.SendMsg(wrapperspb.String("a")))
			require.NoError(t, cs.RecvMsg(new(wrapperspb.StringValue))) // the handler runs
			require.Equal(t, 1, l.InFlight())
			require.Equal(t, codes.ResourceExhausted, status.Code(unary(context.Background(), cc, "b")))

			require.NoError(t, cs.CloseSend())
			require.Error(t, cs.RecvMsg(new(wrapperspb.StringValue))) // io.EOF: the handler returned
			require.Zero(t, l.InFlight())
			require.NoError(t, unary(context.Background(), cc, "c"))
		})
	}
}

// A handler that panics frees its slot, and the panic goes on.
func TestServerPanicFreesTheSlot(t *testing.T) {
	l, _ := limittest.Fixed(t, "echo", 1)
	unaryIC := grpclimit.UnaryServerInterceptor(l)
	require.PanicsWithValue(t, "bug", func() {
		_, _ = unaryIC(context.Background(), nil, &grpc.UnaryServerInfo{}, func(context.Context, any) (any, error) { panic("bug") })
	})
	require.Equal(t, "none", limittest.Classified(t, l))
	streamIC := grpclimit.StreamServerInterceptor(l)
	require.PanicsWithValue(t, "bug", func() {
		_ = streamIC(nil, nil, &grpc.StreamServerInfo{}, func(any, grpc.ServerStream) error { panic("bug") })
	})
	require.Equal(t, "none", limittest.Classified(t, l))
}

// A caller whose own deadline passes, or who cancels, departs (adaptivelimit.Departed): the
// deadline is the caller's to send, so it is a drop only where the limiter's last window
// queued and the call ran long, never on a server without a queue (issue 36: a client that
// sent a deadline of a millisecond made every call a drop).
func TestServerCallerDeparts(t *testing.T) {
	for _, tc := range []struct {
		name           string
		queued, cancel bool
		want           string
	}{
		{"deadline, no queue", false, false, "none"},
		{"cancel, no queue", false, true, "none"},
		{"deadline, queued", true, false, "drop"},
		{"cancel, queued", true, true, "drop"},
	} {
		for _, kind := range []string{"unary", "stream"} {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				l, clock := limittest.Fixed(t, "echo", 1)
				limittest.Queue(t, l, clock, tc.queued, time.Second)
				entered := make(chan struct{}, 1)
				e := &echo{answer: func(ctx context.Context, _ string) error {
					clock.Advance(time.Second) // the call ran 1 s; its end closes the window
					entered <- struct{}{}
					<-ctx.Done()
					return ctx.Err()
				}}
				cc := dial(t, "tcp", e, []grpc.ServerOption{
					grpc.UnaryInterceptor(grpclimit.UnaryServerInterceptor(l)),
					grpc.StreamInterceptor(grpclimit.StreamServerInterceptor(l)),
				})
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				defer cancel()
				if tc.cancel {
					go func() { <-entered; cancel() }()
				}
				before := l.Snapshot()
				var err error
				if kind == "unary" {
					err = unary(ctx, cc, "hi")
				} else {
					var cs grpc.ClientStream
					if cs, err = cc.NewStream(ctx, &bidiDesc, bidiMethod); err == nil {
						require.NoError(t, cs.CloseSend()) // the handler answers at the end of the stream
						err = cs.RecvMsg(new(wrapperspb.StringValue))
					}
				}
				require.Error(t, err)
				require.Equal(t, tc.want, limittest.Departed(t, l, before))
			})
		}
	}
}
