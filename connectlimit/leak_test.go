package connectlimit_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/connectlimit"
	"github.com/resilience4cata/adaptivelimit/limittest"
)

// TestCallbacksNeverLeakSlots runs every entry point with each user-supplied function (the
// handler, the classifier) replaced by one that panics, returns garbage or blocks until its
// context ends. Afterwards no call holds a slot, and the fixed limit of 2 admits exactly 2
// again. Calls run on the real clock, each bounded by a context of 100 ms; the slots that a
// server frees after its client saw the end are waited for (limittest.WaitFree).
func TestCallbacksNeverLeakSlots(t *testing.T) {
	const limit = 2
	block := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	handlers := []struct {
		name string
		body func(ctx context.Context) error
	}{
		{"handler returns", func(context.Context) error { return nil }},
		{"handler panics", func(context.Context) error { panic("handler") }},
		{"handler returns garbage", func(context.Context) error { return (*limittest.PanickingError)(nil) }},
		{"handler blocks until its context ends", block},
	}
	classifiers := []struct {
		name     string
		classify func(ctx context.Context) func(error) adaptivelimit.Outcome
	}{
		{"default classifier", func(context.Context) func(error) adaptivelimit.Outcome { return connectlimit.DefaultOutcome }},
		{"classifier panics", func(context.Context) func(error) adaptivelimit.Outcome {
			return func(error) adaptivelimit.Outcome { panic("classifier") }
		}},
		{"classifier returns garbage", func(context.Context) func(error) adaptivelimit.Outcome {
			return func(error) adaptivelimit.Outcome { return adaptivelimit.Outcome(99) }
		}},
		{"classifier blocks until the context ends", func(ctx context.Context) func(error) adaptivelimit.Outcome {
			return func(error) adaptivelimit.Outcome { <-ctx.Done(); return adaptivelimit.Drop }
		}},
	}
	for _, entry := range leakEntries {
		for _, h := range handlers {
			for _, cl := range classifiers {
				t.Run(entry.name+"/"+h.name+"/"+cl.name, func(t *testing.T) {
					ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
					defer cancel()
					l, _ := limittest.Fixed(t, "leaks", limit)
					interceptor := connect.WithInterceptors(connectlimit.NewInterceptor(l, connectlimit.WithOutcome(cl.classify(ctx))))
					callThrough(ctx, t, entry.client, answering(h.body), interceptor, entry.call)
					limittest.WaitFree(t, l)
					limittest.RequireNoSlotLost(t, l, limit)
				})
			}
		}
	}

	// Each entry point waits for a slot where the limiter has a MaxWait, and its call's
	// context ends while it waits: a handler's through the client's cancellation. The
	// waiting call frees nothing it did not take.
	critical := connectlimit.WithClassFrom(func(context.Context, connect.Spec, http.Header) string { return "critical" })
	for _, entry := range leakEntries {
		for _, opts := range [][]connectlimit.Option{nil, {critical}} {
			name := entry.name + "/context ends while waiting"
			if opts != nil {
				name += "/classed"
			}
			t.Run(name, func(t *testing.T) {
				l, _ := limittest.FixedWaiting(t, "leaks", limit)
				interceptor := connect.WithInterceptors(connectlimit.NewInterceptor(l, opts...))
				limittest.WhileWaiting(t, l, limit, func(waiting chan struct{}) {
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					go func() {
						select {
						case <-waiting:
							cancel()
						case <-ctx.Done():
						}
					}()
					callThrough(ctx, t, entry.client, answering(func(context.Context) error { return nil }), interceptor, entry.call)
					for deadline := time.Now().Add(time.Second); l.Snapshot().Waiting != 0 && time.Now().Before(deadline); {
						time.Sleep(time.Millisecond) // a handler notices its client's end on its own goroutine
					}
				})
				limittest.RequireNoSlotLost(t, l, limit)
			})
		}
	}
}

func callSay(ctx context.Context, c clients) error { _, err := c.callSay(ctx, ""); return err }

func callList(ctx context.Context, c clients) error { _, err := c.callList(ctx, ""); return err }

func callChat(ctx context.Context, c clients) error {
	s := c.chat.CallBidiStream(ctx)
	defer s.CloseResponse()
	if err := s.Send(&msg{Value: "hi"}); err != nil {
		return err
	}
	if err := s.CloseRequest(); err != nil {
		return err
	}
	for {
		if _, err := s.Receive(); err != nil {
			return err
		}
	}
}

// TestClassCallbacksNeverLeakSlots runs every entry point of a classed limiter with a class
// function and a bypass that panic or return garbage: no call holds a slot afterwards.
func TestClassCallbacksNeverLeakSlots(t *testing.T) {
	const limit = 2
	callbacks := []struct {
		name string
		opts []connectlimit.Option
	}{
		{"class panics", []connectlimit.Option{connectlimit.WithClassFrom(func(context.Context, connect.Spec, http.Header) string { panic("class") })}},
		{"class returns garbage", []connectlimit.Option{connectlimit.WithClassFrom(func(context.Context, connect.Spec, http.Header) string { return "\x00nonsense" })}},
		{"bypass panics", []connectlimit.Option{connectlimit.WithBypass(func(context.Context, connect.Spec) bool { panic("bypass") })}},
	}
	for _, entry := range leakEntries {
		for _, cb := range callbacks {
			t.Run(entry.name+"/"+cb.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(adaptivelimit.WithClass(context.Background(), "critical"), 100*time.Millisecond)
				defer cancel()
				l := limittest.Classed(t, "leaks", limit)
				interceptor := connect.WithInterceptors(connectlimit.NewInterceptor(l, cb.opts...))
				callThrough(ctx, t, entry.client, answering(func(context.Context) error { return nil }), interceptor, entry.call)
				limittest.WaitFree(t, l)
				limittest.RequireNoSlotLost(t, l, limit)
			})
		}
	}
}

// leakEntries are the entry points the leak tests call through.
var leakEntries = []struct {
	name   string
	client bool // the limiter is the client's, else the handler's
	call   func(ctx context.Context, c clients) error
}{
	{"handler unary", false, callSay},
	{"handler stream", false, callList},
	{"client unary", true, callSay},
	{"client server stream", true, callList},
	{"client bidi stream", true, callChat},
}

// callThrough serves svc, with the interceptor in the client or in the handler, and makes
// one call, which may panic.
func callThrough(ctx context.Context, t *testing.T, client bool, svc *service, interceptor connect.Option, call func(ctx context.Context, c clients) error) {
	var c clients
	if client {
		url, hc := serve(t, svc)
		c = newClients(url, hc, interceptor)
	} else {
		url, hc := serve(t, svc, interceptor)
		c = newClients(url, hc)
	}
	defer func() { _ = recover() }()
	_ = call(ctx, c)
}

// answering is the test service whose handlers send one message where they stream, and end
// with what body returns.
func answering(body func(ctx context.Context) error) *service {
	return &service{
		say: func(ctx context.Context, _ string) (string, error) { return "hi", body(ctx) },
		list: func(ctx context.Context, _ string, send func(string) error) error {
			_ = send("one")
			return body(ctx)
		},
		chat: func(ctx context.Context, receive func() (string, error), send func(string) error) error {
			if _, err := receive(); err != nil {
				return err
			}
			_ = send("one")
			return body(ctx)
		},
	}
}
