package httplimit_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/httplimit"
	"github.com/resilience4cata/adaptivelimit/limittest"
)

func TestMiddlewareRejects(t *testing.T) {
	for _, tc := range []struct {
		name       string
		opts       []httplimit.ServerOption
		status     int
		retryAfter []string
	}{
		{"default", nil, 503, []string{"1"}},
		{"429", []httplimit.ServerOption{httplimit.WithRejectionStatus(429), httplimit.WithRetryAfter(2500 * time.Millisecond)}, 429, []string{"3"}},
		{"no Retry-After", []httplimit.ServerOption{httplimit.WithRetryAfter(0)}, 503, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, _ := limittest.Fixed(t, "api", 1)
			var calls atomic.Int64
			srv := newServer(t, httplimit.Middleware(l, tc.opts...)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
			})))
			held, err := l.Acquire() // the limit is full
			require.NoError(t, err)

			resp, err := srv.Client().Get(srv.URL)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())

			require.Equal(t, tc.status, resp.StatusCode)
			require.Equal(t, tc.retryAfter, resp.Header.Values("Retry-After"))
			require.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"))
			require.Equal(t, http.StatusText(tc.status)+"\n", string(body))
			require.Zero(t, calls.Load(), "the handler is not called")
			require.Equal(t, uint64(1), l.Snapshot().Rejected)

			held.Done(nil)
			resp, err = srv.Client().Get(srv.URL)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Equal(t, int64(1), calls.Load())
		})
	}
}

// A nil limiter, a nil function or a bad status panics when Middleware or Transport is
// built, naming the package and the option, not at the first request.
func TestRejectsBadOptions(t *testing.T) {
	l, _ := limittest.Fixed(t, "api", 1)
	for want, build := range map[string]func(){
		"httplimit: rejection status 200 is not a 4xx or 5xx status": func() { httplimit.Middleware(l, httplimit.WithRejectionStatus(200)) },
		"httplimit: nil limiter":                                     func() { httplimit.Middleware(nil) },
		"httplimit: WithServerOutcome(nil)":                          func() { httplimit.Middleware(l, httplimit.WithServerOutcome(nil)) },
		"httplimit: WithBypass(nil)":                                 func() { httplimit.Middleware(l, httplimit.WithBypass(nil)) },
		"httplimit: WithClassFrom(nil)": func() {
			httplimit.Middleware(l, httplimit.WithClassFrom((func(*http.Request) string)(nil)))
		},
		"httplimit: nil limiter ":           func() { httplimit.Transport(nil, nil) },
		"httplimit: WithClientOutcome(nil)": func() { httplimit.Transport(l, nil, httplimit.WithClientOutcome(nil)) },
		"httplimit: WithBypass(nil) ":       func() { httplimit.Transport(l, nil, httplimit.WithBypass(nil)) },
	} {
		require.PanicsWithValue(t, strings.TrimSpace(want), build)
	}
}

// Each way a handler can end, and what the limiter makes of it.
func TestMiddlewareClassifies(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler func(w http.ResponseWriter, r *http.Request)
		opts    []httplimit.ServerOption
		want    string
	}{
		{"success", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }, nil, "sample"},
		{"no write", func(w http.ResponseWriter, r *http.Request) {}, nil, "sample"},
		{"404", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, nil, "none"},
		{"503", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }, nil, "drop"},
		{"504", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(504) }, nil, "drop"},
		{"500", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }, nil, "none"},
		{"1xx then 503", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusEarlyHints)
			w.WriteHeader(503)
		}, nil, "drop"},
		{"flushed", func(w http.ResponseWriter, r *http.Request) { w.(http.Flusher).Flush() }, nil, "sample"},
		{"panic", func(w http.ResponseWriter, r *http.Request) { panic("handler bug") }, nil, "none"},
		{"abort", func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) }, nil, "none"},
		{"custom classifier", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) },
			[]httplimit.ServerOption{httplimit.WithServerOutcome(func(r *http.Request, status int) adaptivelimit.Outcome {
				if status == http.StatusNotFound {
					return adaptivelimit.Drop
				}
				return adaptivelimit.Sample
			})}, "drop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, clock := limittest.Fixed(t, "api", 1)
			done := make(chan struct{}, 1)
			srv := newServer(t, served(httplimit.Middleware(l, tc.opts...)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				clock.Advance(time.Second) // the handler takes 1 s; the window is over
				tc.handler(w, r)
			})), done))
			if resp, err := srv.Client().Get(srv.URL); err == nil { // a panic closes the connection
				_, _ = io.Copy(io.Discard, resp.Body)
				require.NoError(t, resp.Body.Close())
			}
			<-done
			require.Equal(t, tc.want, limittest.Classified(t, l))
			if tc.want != "none" {
				require.Equal(t, time.Second, l.Snapshot().Last.MeanLatency, "the handler's latency")
			}
		})
	}
}

// A client that goes away while the handler runs is adaptivelimit.Departed: a drop only where
// the limiter's windows show a queue (a mean latency 1.25 times the least) and the request ran
// past the least, whatever slots are held, so that clients who leave at will, at any
// rate, cannot lower the limit (issue 36: every departure at a full limiter was a drop). A
// custom outcome function judges it alone.
func TestMiddlewareClientGoesAway(t *testing.T) {
	ignore := []httplimit.ServerOption{httplimit.WithServerOutcome(func(*http.Request, int) adaptivelimit.Outcome {
		return adaptivelimit.Ignore
	})}
	for _, c := range []struct {
		name   string
		limit  int
		queued bool
		ran    time.Duration
		opts   []httplimit.ServerOption
		want   string
	}{
		{"every slot held, no queue", 1, false, time.Second, nil, "none"},
		{"a slot free, no queue", 2, false, time.Second, nil, "none"},
		{"queued, left late", 1, true, time.Second, nil, "drop"},
		{"queued, slots free, left late", 3, true, time.Second, nil, "drop"},
		{"queued, left soon", 1, true, 15 * time.Millisecond, nil, "none"},
		{"custom outcome", 1, true, time.Second, ignore, "none"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, clock := limittest.Fixed(t, "api", c.limit)
			limittest.Queue(t, l, clock, c.queued, c.ran)
			clientGoesAway(t, l, clock, c.ran, c.opts, c.want)
		})
	}
}

func clientGoesAway(t *testing.T, l *adaptivelimit.Limiter, clock *adaptivelimit.ManualClock, ran time.Duration, opts []httplimit.ServerOption, want string) {
	before := l.Snapshot()
	done := make(chan struct{}, 1)
	entered := make(chan struct{})
	srv := newServer(t, served(httplimit.Middleware(l, opts...)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		clock.Advance(ran)
		close(entered)
		<-r.Context().Done()
		w.WriteHeader(503) // what a handler might write as it gives up: the client is gone
	})), done))
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	go func() {
		<-entered
		cancel()
	}()
	_, err = srv.Client().Do(req)
	require.ErrorIs(t, err, context.Canceled)
	<-done
	require.Equal(t, want, limittest.Departed(t, l, before))
	require.Zero(t, l.Snapshot().InFlight)
}
