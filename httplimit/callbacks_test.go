package httplimit_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/httplimit"
	"github.com/resilience4cata/adaptivelimit/limittest"
)

// callbackLimit is the fixed limit of TestCallbacksNeverLeakSlots's limiters.
const callbackLimit = 2

// Every entry point, with each function the user gives it (handler, base transport, body,
// outcome) replaced by one that panics, returns garbage, or blocks until the call's context
// ends, and with the call's context ending while it waits for a slot (the limiter has a
// MaxWait): afterwards no call holds a slot, and the limit admits exactly its calls again. The
// integrations of other stacks mirror this test.
func TestCallbacksNeverLeakSlots(t *testing.T) {
	for _, tc := range []struct {
		name string
		call func(t *testing.T, l *adaptivelimit.Limiter)
	}{
		// Middleware, on a loopback server.
		{"middleware/handler panics", func(t *testing.T, l *adaptivelimit.Limiter) {
			serveOnce(t, l, func(http.ResponseWriter, *http.Request) { panic("handler") }, nil)
		}},
		{"middleware/handler aborts", func(t *testing.T, l *adaptivelimit.Limiter) {
			serveOnce(t, l, func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }, nil)
		}},
		{"middleware/handler writes an invalid status", func(t *testing.T, l *adaptivelimit.Limiter) {
			serveOnce(t, l, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(42) }, nil)
		}},
		{"middleware/handler blocks", func(t *testing.T, l *adaptivelimit.Limiter) {
			b := newBlocker()
			serveOnce(t, l, func(_ http.ResponseWriter, r *http.Request) { b.block(r.Context()) }, b)
		}},
		{"middleware/classifier panics", func(t *testing.T, l *adaptivelimit.Limiter) {
			serveOnce(t, l, ok, nil, httplimit.WithServerOutcome(func(*http.Request, int) adaptivelimit.Outcome {
				panic("classifier")
			}))
		}},
		{"middleware/classifier returns garbage", func(t *testing.T, l *adaptivelimit.Limiter) {
			serveOnce(t, l, ok, nil, httplimit.WithServerOutcome(func(*http.Request, int) adaptivelimit.Outcome {
				return -1
			}))
		}},
		{"middleware/classifier blocks", func(t *testing.T, l *adaptivelimit.Limiter) {
			b := newBlocker()
			serveOnce(t, l, ok, b, httplimit.WithServerOutcome(func(r *http.Request, _ int) adaptivelimit.Outcome {
				b.block(r.Context())
				return adaptivelimit.Sample
			}))
		}},
		{"middleware/class classifier panics", func(t *testing.T, l *adaptivelimit.Limiter) {
			serveOnce(t, l, ok, nil, httplimit.WithClassFrom(func(*http.Request) string { panic("class") }))
		}},
		{"middleware/bypass panics", func(t *testing.T, l *adaptivelimit.Limiter) {
			serveOnce(t, l, ok, nil, httplimit.WithBypass(func(*http.Request) bool { panic("bypass") }))
		}},
		{"middleware/bypassed handler panics", func(t *testing.T, l *adaptivelimit.Limiter) {
			serveOnce(t, l, func(http.ResponseWriter, *http.Request) { panic("handler") }, nil,
				httplimit.WithBypass(func(*http.Request) bool { return true }))
		}},

		{"middleware/context ends while waiting", func(t *testing.T, l *adaptivelimit.Limiter) {
			limittest.WhileWaiting(t, l, callbackLimit, func(waiting chan struct{}) {
				serveOnce(t, l, ok, waiting)
			})
		}},
		{"middleware/context ends while a classed request waits", func(t *testing.T, l *adaptivelimit.Limiter) {
			limittest.WhileWaiting(t, l, callbackLimit, func(waiting chan struct{}) {
				serveOnce(t, l, ok, waiting, httplimit.WithClassFrom(func(*http.Request) string { return "critical" }))
			})
		}},

		// Transport, to a loopback server or through a base of the test's own.
		{"transport/context ends while waiting", func(t *testing.T, l *adaptivelimit.Limiter) {
			limittest.WhileWaiting(t, l, callbackLimit, func(waiting chan struct{}) {
				callOnce(t, l, nil, waiting)
			})
		}},
		{"transport/base panics", func(t *testing.T, l *adaptivelimit.Limiter) {
			callOnce(t, l, roundTripper(func(*http.Request) (*http.Response, error) { panic("base") }), nil)
		}},
		{"transport/base returns neither a response nor an error", func(t *testing.T, l *adaptivelimit.Limiter) {
			callOnce(t, l, roundTripper(func(*http.Request) (*http.Response, error) { return nil, nil }), nil)
		}},
		{"transport/base returns a nil body", func(t *testing.T, l *adaptivelimit.Limiter) {
			callOnce(t, l, roundTripper(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: http.StatusNoContent, Request: r}, nil
			}), nil)
		}},
		{"transport/base blocks", func(t *testing.T, l *adaptivelimit.Limiter) {
			b := newBlocker()
			callOnce(t, l, roundTripper(func(r *http.Request) (*http.Response, error) {
				b.block(r.Context())
				return nil, r.Context().Err()
			}), b)
		}},
		{"transport/bypass panics", func(t *testing.T, l *adaptivelimit.Limiter) {
			callOnce(t, l, nil, nil, httplimit.WithBypass(func(*http.Request) bool { panic("bypass") }))
		}},
		{"transport/body read panics", func(t *testing.T, l *adaptivelimit.Limiter) {
			callOnce(t, l, bodyOf(readerFunc(func([]byte) (int, error) { panic("read") })), nil)
		}},
		{"transport/body read returns garbage", func(t *testing.T, l *adaptivelimit.Limiter) {
			callOnce(t, l, bodyOf(readerFunc(func([]byte) (int, error) { return -1, errors.New("garbage") })), nil)
		}},
		{"transport/body read blocks", func(t *testing.T, l *adaptivelimit.Limiter) {
			b := newBlocker()
			callOnce(t, l, roundTripper(func(r *http.Request) (*http.Response, error) {
				body := readerFunc(func([]byte) (int, error) {
					b.block(r.Context())
					return 0, r.Context().Err()
				})
				return &http.Response{StatusCode: http.StatusOK, Request: r, Body: io.NopCloser(body)}, nil
			}), b)
		}},
		{"transport/body read and close panic", func(t *testing.T, l *adaptivelimit.Limiter) {
			callOnce(t, l, roundTripper(func(r *http.Request) (*http.Response, error) {
				body := panickyCloser{readerFunc(func([]byte) (int, error) { panic("read") })}
				return &http.Response{StatusCode: http.StatusOK, Request: r, Body: body}, nil
			}), nil)
		}},
		{"transport/classifier panics", func(t *testing.T, l *adaptivelimit.Limiter) {
			callOnce(t, l, nil, nil, httplimit.WithClientOutcome(func(*http.Response, error) adaptivelimit.Outcome {
				panic("classifier")
			}))
		}},
		{"transport/classifier panics on an error", func(t *testing.T, l *adaptivelimit.Limiter) {
			callOnce(t, l, roundTripper(func(*http.Request) (*http.Response, error) { return nil, errors.New("refused") }), nil,
				httplimit.WithClientOutcome(func(_ *http.Response, err error) adaptivelimit.Outcome {
					panic("classifier")
				}))
		}},
		{"transport/classifier panics on a body read's error", func(t *testing.T, l *adaptivelimit.Limiter) {
			callOnce(t, l, bodyOf(readerFunc(func([]byte) (int, error) { return 0, errors.New("reset") })), nil,
				httplimit.WithClientOutcome(func(_ *http.Response, err error) adaptivelimit.Outcome {
					if err != nil {
						panic("classifier")
					}
					return adaptivelimit.Sample
				}))
		}},
		{"transport/classifier returns garbage", func(t *testing.T, l *adaptivelimit.Limiter) {
			callOnce(t, l, nil, nil, httplimit.WithClientOutcome(func(*http.Response, error) adaptivelimit.Outcome {
				return 1 << 20
			}))
		}},
		{"transport/classifier blocks", func(t *testing.T, l *adaptivelimit.Limiter) {
			b := newBlocker()
			callOnce(t, l, nil, b, httplimit.WithClientOutcome(func(resp *http.Response, _ error) adaptivelimit.Outcome {
				b.block(resp.Request.Context())
				return adaptivelimit.Sample
			}))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, _ := limittest.FixedWaiting(t, "api", callbackLimit)
			tc.call(t, l)
			limittest.RequireNoSlotLost(t, l, callbackLimit)
		})
	}
}

func ok(http.ResponseWriter, *http.Request) {}

// blocker lets a callback block until its call's context ends, and tells the test when it
// has started to, so that the test ends the context then.
type blocker chan struct{}

func newBlocker() blocker { return make(chan struct{}, 1) }

func (b blocker) block(ctx context.Context) {
	b <- struct{}{}
	<-ctx.Done()
}

// request returns a GET of url whose context ends once a callback has blocked (never, for a
// nil b), and the func that ends it when the call is over.
func (b blocker) request(t *testing.T, url string) (*http.Request, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-b:
			cancel()
		case <-ctx.Done():
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	return req, cancel
}

// serveOnce sends one request to a loopback server that runs h inside Middleware(l, opts),
// cancels it when blocked says so (a nil blocked never does), and returns once the
// middleware has returned.
func serveOnce(t *testing.T, l *adaptivelimit.Limiter, h http.HandlerFunc, blocked blocker, opts ...httplimit.ServerOption) {
	t.Helper()
	served := make(chan struct{}, 1)
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { served <- struct{}{} }()
		httplimit.Middleware(l, opts...)(h).ServeHTTP(w, r)
	}))
	req, cancel := blocked.request(t, srv.URL)
	defer cancel()
	if resp, err := srv.Client().Do(req); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	<-served
}

// callOnce makes one call through Transport(l, base, opts) to a loopback server that
// answers 200 (a nil base is the server's own transport), cancels it when blocked says so
// (a nil blocked never does), and reads and closes the response's body, recovering what
// panics on the way as a caller would.
func callOnce(t *testing.T, l *adaptivelimit.Limiter, base http.RoundTripper, blocked blocker, opts ...httplimit.ClientOption) {
	t.Helper()
	srv := newServer(t, http.HandlerFunc(ok))
	if base == nil {
		base = srv.Client().Transport
	}
	req, cancel := blocked.request(t, srv.URL)
	defer cancel()
	client := &http.Client{Transport: httplimit.Transport(l, base, opts...)}
	var resp *http.Response
	recovered(func() { resp, _ = client.Do(req) })
	if resp != nil {
		recovered(func() { _, _ = io.Copy(io.Discard, resp.Body) })
		recovered(func() { _ = resp.Body.Close() })
	}
}

func recovered(f func()) {
	defer func() { _ = recover() }()
	f()
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// bodyOf is a base whose responses are 200s with body r.
func bodyOf(r io.Reader) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Request: req, Body: io.NopCloser(r)}, nil
	})
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(b []byte) (int, error) { return f(b) }

type panickyCloser struct{ io.Reader }

func (panickyCloser) Close() error { panic("close") }
