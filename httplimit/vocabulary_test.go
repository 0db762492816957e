package httplimit_test

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/httplimit"
	"github.com/resilience4cata/adaptivelimit/limittest"
)

// The server and the client judge a status alike: 429, 503 and 504 are drops on both sides.
func TestOutcomesAgree(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	for status := 200; status < 600; status++ {
		server := httplimit.DefaultServerOutcome(r, status)
		client := httplimit.DefaultClientOutcome(&http.Response{StatusCode: status}, nil)
		require.Equal(t, server, client, "status %d", status)
		want := adaptivelimit.Outcome(adaptivelimit.Sample)
		switch {
		case status == 429 || status == 503 || status == 504:
			want = adaptivelimit.Drop
		case status >= 400:
			want = adaptivelimit.Ignore
		}
		require.Equal(t, want, server, "status %d", status)
	}
}

// A HeaderClass value that names no class of the limiter, or a name that no wire carries,
// panics when Middleware is built, naming the value.
func TestHeaderClassChecked(t *testing.T) {
	l := limittest.Classed(t, "api", 2)
	require.PanicsWithValue(t, `httplimit: HeaderClass maps to class "Critical", which limiter "api" lacks (its classes: ["critical" "batch"])`, func() {
		httplimit.Middleware(l, httplimit.WithClassFrom(httplimit.HeaderClass("x-criticality", map[string]string{"high": "Critical"}, trustLoopback)))
	})
	plain, _ := limittest.Fixed(t, "plain", 2)
	require.PanicsWithValue(t, `httplimit: HeaderClass maps to class "café", whose name breaks the rule of class names`, func() {
		httplimit.Middleware(plain, httplimit.WithClassFrom(httplimit.HeaderClass("x-criticality", map[string]string{"high": "café"}, trustLoopback)))
	})
	require.NotPanics(t, func() {
		httplimit.Middleware(l, httplimit.WithClassFrom(httplimit.HeaderClass("x-criticality", map[string]string{"high": "critical", "low": ""}, trustLoopback)))
		httplimit.Middleware(plain, httplimit.WithClassFrom(httplimit.HeaderClass("x-criticality", map[string]string{"high": "critical"}, trustLoopback)))
	}, "a limiter without classes passes the class on to the next server")
}

// Transport sends the context's class in x-criticality by default; a class that no wire
// carries is not sent, and the call does not fail for it, nor counts as a drop.
func TestTransportSendsClass(t *testing.T) {
	var seen []string
	srv := newServer(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("X-Criticality"))
	}))
	l, _ := limittest.Fixed(t, "client", 2)
	c := &http.Client{Transport: httplimit.Transport(l, srv.Client().Transport)}
	for _, class := range []string{"critical", "café", "a\r\nb", "nul\x00"} {
		req, err := http.NewRequestWithContext(adaptivelimit.WithClass(context.Background(), class), http.MethodGet, srv.URL, nil)
		require.NoError(t, err)
		resp, err := c.Do(req)
		require.NoError(t, err, "class %q", class)
		require.NoError(t, resp.Body.Close())
	}
	require.Equal(t, []string{"critical", "", "", ""}, seen)
	s := l.Snapshot()
	require.Equal(t, uint64(4), s.Successes)
	require.Zero(t, s.Drops)

	off := &http.Client{Transport: httplimit.Transport(l, srv.Client().Transport, httplimit.WithClassHeader(""))}
	req, _ := http.NewRequestWithContext(adaptivelimit.WithClass(context.Background(), "critical"), http.MethodGet, srv.URL, nil)
	resp, err := off.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, "", seen[4], `WithClassHeader("") sends none`)

	// No limiter can have such a class: a classed one counts it.
	classed := limittest.Classed(t, "classed", 2)
	c = &http.Client{Transport: httplimit.Transport(classed, srv.Client().Transport)}
	req, _ = http.NewRequestWithContext(adaptivelimit.WithClass(context.Background(), "a\r\nb"), http.MethodGet, srv.URL, nil)
	resp, err = c.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, "", seen[5])
	require.Equal(t, uint64(1), classed.Snapshot().UnknownClass)
}

// Retry-After is clamped to 2147483647 seconds: never negative, never wrapped.
func TestRetryAfterClamped(t *testing.T) {
	l, _ := limittest.Fixed(t, "api", 1)
	held, err := l.Acquire()
	require.NoError(t, err)
	defer held.Cancel()
	for d, want := range map[time.Duration]string{math.MaxInt64: "2147483647", time.Nanosecond: "1"} {
		w := httptest.NewRecorder()
		httplimit.Middleware(l, httplimit.WithRetryAfter(d))(http.NotFoundHandler()).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		require.Equal(t, want, w.Header().Get("Retry-After"), "%v", d)
	}
}

// By default the gRPC health service, served by connect or gRPC behind Middleware, is
// bypassed, on the server and in Transport, as in grpclimit and connectlimit.
func TestDefaultBypass(t *testing.T) {
	l, _ := limittest.Fixed(t, "api", 1)
	held, err := l.Acquire()
	require.NoError(t, err)
	defer held.Cancel()
	h := httplimit.Middleware(l)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for path, want := range map[string]int{"/grpc.health.v1.Health/Check": 200, "/orders": 503} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, path, nil))
		require.Equal(t, want, w.Code, path)
	}
	srv := newServer(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	c := &http.Client{Transport: httplimit.Transport(l, srv.Client().Transport)}
	resp, err := c.Post(srv.URL+"/grpc.health.v1.Health/Check", "", nil)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	_, err = c.Post(srv.URL+"/orders", "", nil)
	require.ErrorIs(t, err, adaptivelimit.ErrLimitExceeded)
}

// With MaxWait, a request to a full limit waits for a slot and is served once one frees,
// on the server and in Transport.
func TestWaits(t *testing.T) {
	l, _ := limittest.FixedWaiting(t, "api", 1)
	srv := newServer(t, httplimit.Middleware(l)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	client, _ := limittest.FixedWaiting(t, "client", 1)
	c := &http.Client{Transport: httplimit.Transport(client, srv.Client().Transport)}
	for _, lim := range []*adaptivelimit.Limiter{l, client} {
		held, err := lim.Acquire()
		require.NoError(t, err)
		go func() {
			for lim.Snapshot().Waiting == 0 {
				time.Sleep(time.Millisecond)
			}
			held.Done(nil)
		}()
		resp, err := c.Get(srv.URL)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, 200, resp.StatusCode, lim.Snapshot().Name)
	}
}
