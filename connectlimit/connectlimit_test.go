package connectlimit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/connectlimit"
	"github.com/resilience4cata/adaptivelimit/limittest"
)

func TestDefaultOutcome(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want adaptivelimit.Outcome
	}{
		{nil, adaptivelimit.Sample},
		{connect.NewError(connect.CodeDeadlineExceeded, nil), adaptivelimit.Drop},
		{connect.NewError(connect.CodeResourceExhausted, nil), adaptivelimit.Drop},
		{connect.NewError(connect.CodeUnavailable, nil), adaptivelimit.Drop},
		{fmt.Errorf("wrapped: %w", connect.NewError(connect.CodeUnavailable, nil)), adaptivelimit.Drop},
		{context.DeadlineExceeded, adaptivelimit.Drop},
		{context.Canceled, adaptivelimit.Ignore},
		{connect.NewError(connect.CodeCanceled, nil), adaptivelimit.Ignore},
		{connect.NewError(connect.CodeInvalidArgument, nil), adaptivelimit.Ignore},
		{connect.NewError(connect.CodeInternal, nil), adaptivelimit.Ignore},
		{errors.New("plain"), adaptivelimit.Ignore},
	} {
		require.Equal(t, tc.want, connectlimit.DefaultOutcome(tc.err), "%v", tc.err)
	}
}

func TestOptionsPanic(t *testing.T) {
	l, _ := limittest.Fixed(t, "options", 1)
	require.PanicsWithValue(t, "connectlimit: nil limiter", func() { connectlimit.NewInterceptor(nil) })
	require.PanicsWithValue(t, "connectlimit: WithOutcome(nil)", func() { connectlimit.NewInterceptor(l, connectlimit.WithOutcome(nil)) })
	require.PanicsWithValue(t, "connectlimit: WithBypass(nil)", func() { connectlimit.NewInterceptor(l, connectlimit.WithBypass(nil)) })
	require.PanicsWithValue(t, "connectlimit: WithClassFrom(nil)", func() {
		connectlimit.NewInterceptor(l, connectlimit.WithClassFrom((func(context.Context, connect.Spec, http.Header) string)(nil)))
	})
	require.PanicsWithValue(t, "connectlimit: rejection code 0 is not a connect error code", func() {
		connectlimit.NewInterceptor(l, connectlimit.WithRejectionCode(0))
	})
	require.Panics(t, func() { connectlimit.NewInterceptor(l, connectlimit.WithRejectionCode(17)) })
}

// handlerErrors are errors a handler may end with, and how each call is classified.
var handlerErrors = []struct {
	name string
	err  error
	want string
}{
	{"ok", nil, "sample"},
	{"deadline", connect.NewError(connect.CodeDeadlineExceeded, errors.New("slow")), "drop"},
	{"unavailable", connect.NewError(connect.CodeUnavailable, errors.New("down")), "drop"},
	{"invalid argument", connect.NewError(connect.CodeInvalidArgument, errors.New("bad")), "none"},
	{"context error", context.Canceled, "none"},
}

func TestHandlerClassification(t *testing.T) {
	for _, tc := range handlerErrors {
		t.Run(tc.name, func(t *testing.T) {
			l, clock := limittest.Fixed(t, "handler", 1)
			end := func(context.Context) error {
				require.Equal(t, 1, l.InFlight())
				clock.Advance(time.Second)
				return tc.err
			}
			svc := &service{
				say: func(ctx context.Context, _ string) (string, error) { return "hi", end(ctx) },
				list: func(ctx context.Context, _ string, send func(string) error) error {
					require.NoError(t, send("one"))
					return end(ctx)
				},
			}
			url, hc := serve(t, svc, connect.WithInterceptors(connectlimit.NewInterceptor(l)))
			c := newClients(url, hc)

			_, err := c.callSay(context.Background(), "")
			require.Equal(t, tc.err == nil, err == nil, "%v", err)
			require.Equal(t, tc.want, limittest.Classified(t, l), "unary")

			l, clock = limittest.Fixed(t, "handler", 1) // end reads the new ones
			url, hc = serve(t, svc, connect.WithInterceptors(connectlimit.NewInterceptor(l)))
			got, err := newClients(url, hc).callList(context.Background(), "")
			require.Equal(t, []string{"one"}, got)
			require.Equal(t, tc.err == nil, err == nil, "%v", err)
			require.Equal(t, tc.want, limittest.Classified(t, l), "stream")
		})
	}
}

func TestHandlerRejection(t *testing.T) {
	for _, tc := range []struct {
		name       string
		opts       []connectlimit.Option
		code       connect.Code
		retryAfter string
	}{
		{"default", nil, connect.CodeResourceExhausted, "1"},
		{"options", []connectlimit.Option{connectlimit.WithRejectionCode(connect.CodeUnavailable), connectlimit.WithRetryAfter(2500 * time.Millisecond)}, connect.CodeUnavailable, "3"},
		{"no Retry-After", []connectlimit.Option{connectlimit.WithRetryAfter(0)}, connect.CodeResourceExhausted, ""},
		{"Retry-After clamped", []connectlimit.Option{connectlimit.WithRetryAfter(math.MaxInt64)}, connect.CodeResourceExhausted, "2147483647"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, _ := limittest.Fixed(t, "rejection", 1)
			held, err := l.Acquire()
			require.NoError(t, err)
			defer held.Cancel()
			called := false
			svc := &service{
				say:  func(context.Context, string) (string, error) { called = true; return "", nil },
				list: func(context.Context, string, func(string) error) error { called = true; return nil },
			}
			url, hc := serve(t, svc, connect.WithInterceptors(connectlimit.NewInterceptor(l, tc.opts...)))
			for _, protocol := range protocols {
				c := newClients(url, hc, protocol.opts...)
				_, err = c.callSay(context.Background(), "")
				requireRejection(t, err, tc.code, tc.retryAfter, protocol.name)
				_, err = c.callList(context.Background(), "")
				requireRejection(t, err, tc.code, tc.retryAfter, protocol.name)
			}
			require.False(t, called, "a handler ran past a full limit")
			require.Equal(t, 1, l.InFlight())
		})
	}
}

// protocols are the protocols a connect client speaks: the rejection's metadata travels in
// headers in one and in trailers in the others.
var protocols = []struct {
	name string
	opts []connect.ClientOption
}{
	{"connect", nil},
	{"grpc", []connect.ClientOption{connect.WithGRPC()}},
	{"grpc-web", []connect.ClientOption{connect.WithGRPCWeb()}},
}

func requireRejection(t *testing.T, err error, code connect.Code, retryAfter, protocol string) {
	t.Helper()
	var ce *connect.Error
	require.ErrorAs(t, err, &ce, protocol)
	require.Equal(t, code, ce.Code(), "%s: %v", protocol, err)
	require.Equal(t, retryAfter, ce.Meta().Get(connectlimit.RetryAfterKey), protocol)
}

// TestHandlerStreamHoldsSlot checks that a stream holds its slot until its handler returns.
func TestHandlerStreamHoldsSlot(t *testing.T) {
	l, _ := limittest.Fixed(t, "stream", 2)
	release := make(chan struct{})
	svc := &service{list: func(_ context.Context, _ string, send func(string) error) error {
		if err := send("first"); err != nil {
			return err
		}
		<-release
		return send("last")
	}}
	url, hc := serve(t, svc, connect.WithInterceptors(connectlimit.NewInterceptor(l)))
	s, err := newClients(url, hc).list.CallServerStream(context.Background(), connect.NewRequest(wrapperspb.String("")))
	require.NoError(t, err)
	defer s.Close()
	require.True(t, s.Receive())
	require.Equal(t, 1, l.InFlight())
	close(release)
	require.True(t, s.Receive())
	require.False(t, s.Receive())
	require.NoError(t, s.Err())
	require.Equal(t, 0, l.InFlight())
}

func TestClientUnary(t *testing.T) {
	for _, tc := range append(handlerErrors[:4:4],
		struct {
			name string
			err  error
			want string
		}{"server's resource exhausted", connect.NewError(connect.CodeResourceExhausted, errors.New("shed")), "drop"}) {
		t.Run(tc.name, func(t *testing.T) {
			for _, protocol := range protocols {
				l, clock := limittest.Fixed(t, "client", 1)
				svc := &service{say: func(context.Context, string) (string, error) { clock.Advance(time.Second); return "hi", tc.err }}
				url, hc := serve(t, svc)
				opts := append([]connect.ClientOption{connect.WithInterceptors(connectlimit.NewInterceptor(l))}, protocol.opts...)
				_, err := newClients(url, hc, opts...).callSay(context.Background(), "")
				require.Equal(t, tc.err == nil, err == nil, "%s: %v", protocol.name, err)
				require.Equal(t, tc.want, limittest.Classified(t, l), protocol.name)
			}
		})
	}
}

// TestClientContext checks the caller's own cancellation (no sample) and a deadline that
// passes while the call runs (a drop), on a unary call and on a stream.
func TestClientContext(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(ctx *limittest.DeadlineContext, cancel context.CancelFunc)
		want string
	}{
		{"cancelled", func(_ *limittest.DeadlineContext, cancel context.CancelFunc) { cancel() }, "none"},
		{"deadline", func(ctx *limittest.DeadlineContext, _ context.CancelFunc) { ctx.Pass() }, "drop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, clock := limittest.Fixed(t, "client", 1)
			started := make(chan struct{}, 1)
			block := func(ctx context.Context) error {
				clock.Advance(time.Second)
				started <- struct{}{}
				<-ctx.Done()
				return ctx.Err()
			}
			svc := &service{
				say:  func(ctx context.Context, _ string) (string, error) { return "", block(ctx) },
				list: func(ctx context.Context, _ string, _ func(string) error) error { return block(ctx) },
			}
			url, hc := serve(t, svc)
			c := newClients(url, hc, connect.WithInterceptors(connectlimit.NewInterceptor(l)))
			for _, call := range []func(ctx context.Context) error{
				func(ctx context.Context) error { _, err := c.callSay(ctx, ""); return err },
				func(ctx context.Context) error { _, err := c.callList(ctx, ""); return err },
			} {
				deadline := limittest.NewDeadlineContext()
				ctx, cancel := context.WithCancel(deadline)
				go func() { <-started; tc.end(deadline, cancel) }()
				require.Error(t, call(ctx))
				cancel()
				require.Equal(t, tc.want, limittest.Classified(t, l))
				l, clock = limittest.Fixed(t, "client", 1)
				c = newClients(url, hc, connect.WithInterceptors(connectlimit.NewInterceptor(l)))
			}
		})
	}
}

func TestClientRejection(t *testing.T) {
	l, _ := limittest.Fixed(t, "client", 1)
	held, err := l.Acquire()
	require.NoError(t, err)
	defer held.Cancel()
	called := 0
	svc := &service{
		say:  func(context.Context, string) (string, error) { called++; return "", nil },
		list: func(context.Context, string, func(string) error) error { called++; return nil },
		chat: func(context.Context, func() (string, error), func(string) error) error { called++; return nil },
	}
	url, hc := serve(t, svc)
	c := newClients(url, hc, connect.WithInterceptors(connectlimit.NewInterceptor(l)))

	_, err = c.callSay(context.Background(), "")
	requireClientRejection(t, err)
	_, err = c.callList(context.Background(), "")
	requireClientRejection(t, err)
	chat := c.chat.CallBidiStream(context.Background())
	requireClientRejection(t, chat.Send(wrapperspb.String("hi")))
	_, err = chat.Receive()
	requireClientRejection(t, err)
	require.NoError(t, chat.CloseRequest())
	require.NoError(t, chat.CloseResponse())
	require.Equal(t, 0, called, "a rejected call was sent")
	require.Equal(t, 1, l.InFlight())
}

func requireClientRejection(t *testing.T, err error) {
	t.Helper()
	require.ErrorIs(t, err, adaptivelimit.ErrLimitExceeded)
	require.Equal(t, connect.CodeResourceExhausted, connect.CodeOf(err))
}

// TestClientStreams checks when a client's stream frees its slot, and how it is classified.
func TestClientStreams(t *testing.T) {
	l, clock := limittest.Fixed(t, "streams", 1)
	svc := &service{
		list: func(_ context.Context, text string, send func(string) error) error {
			clock.Advance(time.Second)
			for _, s := range []string{"a", "b"} {
				if err := send(s); err != nil {
					return err
				}
			}
			if text == "fail" {
				return connect.NewError(connect.CodeUnavailable, errors.New("down"))
			}
			return nil
		},
		collect: func(_ context.Context, receive func() (string, error)) (string, error) {
			clock.Advance(time.Second)
			all := ""
			for {
				s, err := receive()
				if errors.Is(err, io.EOF) {
					return all, nil
				}
				all += s
			}
		},
		chat: func(_ context.Context, receive func() (string, error), send func(string) error) error {
			clock.Advance(time.Second)
			for {
				s, err := receive()
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return err
				}
				if err := send(s + "!"); err != nil {
					return err
				}
			}
		},
	}
	url, hc := serve(t, svc)
	var c clients
	fresh := func() {
		l, clock = limittest.Fixed(t, "streams", 1)
		c = newClients(url, hc, connect.WithInterceptors(connectlimit.NewInterceptor(l)))
	}
	ctx := context.Background()

	fresh()
	got, err := c.callList(ctx, "")
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, got)
	require.Equal(t, "sample", limittest.Classified(t, l), "a server stream read to its end")

	fresh()
	_, err = c.callList(ctx, "fail")
	require.Equal(t, connect.CodeUnavailable, connect.CodeOf(err))
	require.Equal(t, "drop", limittest.Classified(t, l), "a server stream that fails")

	fresh()
	s, err := c.list.CallServerStream(ctx, connect.NewRequest(wrapperspb.String("")))
	require.NoError(t, err)
	require.True(t, s.Receive())
	require.Equal(t, 1, l.InFlight(), "a server stream being read")
	require.NoError(t, s.Close())
	require.Equal(t, "none", limittest.Classified(t, l), "a server stream closed before its end")

	fresh()
	deadline := limittest.NewDeadlineContext()
	s, err = c.list.CallServerStream(deadline, connect.NewRequest(wrapperspb.String("")))
	require.NoError(t, err)
	require.True(t, s.Receive())
	deadline.Pass() // and the stream is left unread
	limittest.WaitFree(t, l)
	require.Equal(t, "drop", limittest.Classified(t, l), "a server stream whose deadline passed")
	require.NoError(t, s.Close())

	fresh()
	cs := c.collect.CallClientStream(ctx)
	require.NoError(t, cs.Send(wrapperspb.String("x")))
	require.NoError(t, cs.Send(wrapperspb.String("y")))
	require.Equal(t, 1, l.InFlight(), "a client stream being sent")
	resp, err := cs.CloseAndReceive()
	require.NoError(t, err)
	require.Equal(t, "xy", resp.Msg.GetValue())
	require.Equal(t, "sample", limittest.Classified(t, l), "a client stream")

	fresh()
	bidi := c.chat.CallBidiStream(ctx)
	require.NoError(t, bidi.Send(wrapperspb.String("hi")))
	m, err := bidi.Receive()
	require.NoError(t, err)
	require.Equal(t, "hi!", m.GetValue())
	require.Equal(t, 1, l.InFlight(), "an open bidi stream")
	require.NoError(t, bidi.CloseRequest())
	_, err = bidi.Receive()
	require.ErrorIs(t, err, io.EOF)
	require.NoError(t, bidi.CloseResponse())
	require.Equal(t, "sample", limittest.Classified(t, l), "a bidi stream to its end")
}

// TestClientStreamContextEndContainsPanic checks a stream left unread whose context ends:
// the classifier runs on context.AfterFunc's goroutine, where its panic would end the
// process; the slot is freed without a sample and the process lives.
func TestClientStreamContextEndContainsPanic(t *testing.T) {
	l, _ := limittest.Fixed(t, "panic", 1)
	svc := &service{list: func(ctx context.Context, _ string, send func(string) error) error {
		if err := send("one"); err != nil {
			return err
		}
		<-ctx.Done()
		return ctx.Err()
	}}
	url, hc := serve(t, svc)
	classifier := connectlimit.WithOutcome(func(error) adaptivelimit.Outcome { panic("classifier") })
	c := newClients(url, hc, connect.WithInterceptors(connectlimit.NewInterceptor(l, classifier)))
	deadline := limittest.NewDeadlineContext()
	s, err := c.list.CallServerStream(deadline, connect.NewRequest(wrapperspb.String("")))
	require.NoError(t, err)
	require.True(t, s.Receive())
	deadline.Pass() // and the stream is left unread
	limittest.WaitFree(t, l)
	require.Equal(t, "none", limittest.Classified(t, l))
	_ = s.Close()
}

// A caller whose own deadline passes, or who cancels, departs (adaptivelimit.Departed): a
// drop only where the limiter's last window queued and the call ran long, never on a handler
// without a queue, in unary and streaming calls.
func TestHandlerCallerDeparts(t *testing.T) {
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
				l, clock := limittest.Fixed(t, "handler", 1)
				limittest.Queue(t, l, clock, tc.queued, time.Second)
				entered := make(chan struct{}, 1)
				wait := func(ctx context.Context) error {
					clock.Advance(time.Second) // the call ran 1 s; its end closes the window
					entered <- struct{}{}
					<-ctx.Done()
					return ctx.Err()
				}
				svc := &service{
					say:  func(ctx context.Context, _ string) (string, error) { return "", wait(ctx) },
					list: func(ctx context.Context, _ string, _ func(string) error) error { return wait(ctx) },
				}
				url, hc := serve(t, svc, connect.WithInterceptors(connectlimit.NewInterceptor(l)))
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				defer cancel()
				if tc.cancel {
					go func() { <-entered; cancel() }()
				}
				before := l.Snapshot()
				var err error
				if kind == "unary" {
					_, err = newClients(url, hc).callSay(ctx, "")
				} else {
					_, err = newClients(url, hc).callList(ctx, "")
				}
				require.Error(t, err)
				require.Equal(t, tc.want, limittest.Departed(t, l, before))
			})
		}
	}
}
