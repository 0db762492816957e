package grpclimit_test

import (
	"context"
	"errors"
	"io"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/grpclimit"
	"github.com/resilience4cata/adaptivelimit/limittest"
)

func clientInterceptors(l *adaptivelimit.Limiter, opts ...grpclimit.ClientOption) []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithUnaryInterceptor(grpclimit.UnaryClientInterceptor(l, opts...)),
		grpc.WithStreamInterceptor(grpclimit.StreamClientInterceptor(l, opts...)),
	}
}

// A full limit fails unary and streaming calls at once, without sending them.
func TestClientRejects(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			l, _ := limittest.Fixed(t, "echo", 1)
			var calls atomic.Int64
			e := &echo{answer: func(context.Context, string) error { calls.Add(1); return nil }}
			cc := dial(t, network, e, nil, clientInterceptors(l)...)
			held, err := l.Acquire()
			require.NoError(t, err)

			err = unary(context.Background(), cc, "hi")
			require.Equal(t, codes.ResourceExhausted, status.Code(err))
			require.ErrorIs(t, err, adaptivelimit.ErrLimitExceeded)
			_, err = cc.NewStream(context.Background(), &bidiDesc, bidiMethod)
			require.Equal(t, codes.ResourceExhausted, status.Code(err))
			require.ErrorIs(t, err, adaptivelimit.ErrLimitExceeded)
			require.Zero(t, calls.Load(), "nothing reached the server")

			held.Done(nil)
			require.NoError(t, unary(context.Background(), cc, "hi"))
			require.Equal(t, int64(1), calls.Load())
		})
	}
}

// The status of each call, unary and streaming, and what the limiter makes of it.
func TestClientClassifies(t *testing.T) {
	for _, tc := range []struct {
		code codes.Code
		want string
	}{
		{codes.OK, "sample"},
		{codes.DeadlineExceeded, "drop"},
		{codes.ResourceExhausted, "drop"},
		{codes.Unavailable, "drop"},
		{codes.Canceled, "none"},
		{codes.InvalidArgument, "none"},
		{codes.NotFound, "none"},
		{codes.AlreadyExists, "none"},
		{codes.PermissionDenied, "none"},
		{codes.Unauthenticated, "none"},
		{codes.FailedPrecondition, "none"},
		{codes.Internal, "none"},
	} {
		for _, kind := range []string{"unary", "stream"} {
			t.Run(kind+"/"+tc.code.String(), func(t *testing.T) {
				l, clock := limittest.Fixed(t, "echo", 1)
				e := &echo{answer: func(context.Context, string) error {
					clock.Advance(time.Second) // the call takes 1 s; the window is over
					return status.Error(tc.code, "answer")
				}}
				cc := dial(t, "tcp", e, nil, clientInterceptors(l)...)
				var err error
				if kind == "unary" {
					err = unary(context.Background(), cc, "hi")
				} else {
					err = bidi(t, cc, "a")
				}
				require.Equal(t, tc.code, status.Code(err))
				require.Equal(t, tc.want, limittest.Classified(t, l))
			})
		}
	}
}

// A call whose deadline passes is a drop; one that the caller cancels says nothing.
func TestClientDeadlineAndCancellation(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, func())
		code codes.Code
		want string
	}{
		{"deadline", func() (context.Context, func()) { c := limittest.NewDeadlineContext(); return c, c.Pass }, codes.DeadlineExceeded, "drop"},
		{"canceled", func() (context.Context, func()) { return context.WithCancel(context.Background()) }, codes.Canceled, "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, clock := limittest.Fixed(t, "echo", 1)
			entered, release := make(chan struct{}), make(chan struct{})
			defer close(release)
			e := &echo{answer: func(context.Context, string) error {
				clock.Advance(time.Second)
				close(entered)
				<-release
				return nil
			}}
			cc := dial(t, "tcp", e, nil, clientInterceptors(l)...)
			ctx, end := tc.ctx()
			go func() {
				<-entered
				end()
			}()
			err := unary(ctx, cc, "hi")
			require.Equal(t, tc.code, status.Code(err), "%v", err)
			require.Equal(t, tc.want, limittest.Classified(t, l))
		})
	}
}

// A stream holds its client slot until it ends: read to its end, ended by the server after
// its one reply, or abandoned through its context.
func TestClientStreamHoldsItsSlot(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			l, clock := limittest.Fixed(t, "echo", 1)
			cc := dial(t, network, &echo{answer: func(context.Context, string) error { return nil }}, nil, clientInterceptors(l)...)

			cs, err := cc.NewStream(context.Background(), &bidiDesc, bidiMethod)
			require.NoError(t, err)
			for _, m := range []string{"a", "b"} {
				require.NoError(t, cs.SendMsg(wrapperspb.String(m)))
				require.NoError(t, cs.RecvMsg(new(wrapperspb.StringValue)))
				require.Equal(t, 1, l.InFlight(), "the open stream holds the slot")
			}
			require.Equal(t, codes.ResourceExhausted, status.Code(unary(context.Background(), cc, "c")))
			clock.Advance(time.Second) // the stream lasts 1 s
			require.NoError(t, cs.CloseSend())
			require.Equal(t, 1, l.InFlight())
			require.ErrorIs(t, cs.RecvMsg(new(wrapperspb.StringValue)), io.EOF)
			require.Equal(t, "sample", limittest.Classified(t, l))
			require.Equal(t, time.Second, l.Snapshot().Last.MeanLatency, "the stream's whole life")

			// A client-streaming call ends with the server's one reply.
			oneReply := &grpc.StreamDesc{StreamName: "Bidi", ClientStreams: true}
			cs, err = cc.NewStream(context.Background(), oneReply, bidiMethod)
			require.NoError(t, err)
			require.NoError(t, cs.SendMsg(wrapperspb.String("a")))
			require.NoError(t, cs.CloseSend())
			require.Equal(t, 1, l.InFlight())
			clock.Advance(time.Second)
			require.NoError(t, cs.RecvMsg(new(wrapperspb.StringValue)))
			require.Zero(t, l.InFlight())
			require.Equal(t, uint64(2), l.Snapshot().Windows, "a sample")

			// An abandoned stream frees its slot when its context is canceled.
			ctx, cancel := context.WithCancel(context.Background())
			_, err = cc.NewStream(ctx, &bidiDesc, bidiMethod)
			require.NoError(t, err)
			require.Equal(t, 1, l.InFlight())
			clock.Advance(time.Second) // a sample would close a window
			cancel()
			for l.InFlight() != 0 { // the slot is freed by a goroutine of context.AfterFunc
				runtime.Gosched()
			}
			require.Equal(t, uint64(2), l.Snapshot().Windows, "no sample")
		})
	}
}

// A client interceptor stacks on a server one: the server's rejection is the client's drop.
func TestServerRejectionIsAClientDrop(t *testing.T) {
	server, _ := limittest.Fixed(t, "echo", 1)
	client, clock := limittest.Fixed(t, "echo", 2)
	cc := dial(t, "tcp", &echo{answer: func(context.Context, string) error { return nil }},
		[]grpc.ServerOption{grpc.UnaryInterceptor(grpclimit.UnaryServerInterceptor(server))},
		clientInterceptors(client)...)
	held, err := server.Acquire()
	require.NoError(t, err)
	clock.Advance(time.Second)
	err = unary(context.Background(), cc, "hi")
	require.Equal(t, codes.ResourceExhausted, status.Code(err))
	require.False(t, errors.Is(err, adaptivelimit.ErrLimitExceeded), "the server's limit, not the client's")
	require.Equal(t, "drop", limittest.Classified(t, client))
	held.Done(nil)
}

// A classifier's panic frees the slot and goes on to the caller.
func TestClientClassifierPanicGoesOn(t *testing.T) {
	l, _ := limittest.Fixed(t, "echo", 1)
	panics := grpclimit.WithOutcome(func(error) adaptivelimit.Outcome { panic("classifier") })
	cc := dial(t, "tcp", &echo{answer: func(context.Context, string) error { return nil }}, nil, clientInterceptors(l, panics)...)
	require.PanicsWithValue(t, "classifier", func() { _ = unary(context.Background(), cc, "hi") })
	require.Zero(t, l.InFlight())
}
