package httplimit_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/httplimit"
	"github.com/resilience4cata/adaptivelimit/limittest"
)

func get(t *testing.T, c *http.Client, url string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for i := 0; i < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	return resp.StatusCode, string(body)
}

// Under a full shared pool, only the listed header value reaches the critical reserve; the
// handler's context carries the class; a bypassed path is served whatever the limit.
func TestMiddlewareClasses(t *testing.T) {
	l := limittest.Classed(t, "api", 2)
	mw := httplimit.Middleware(l,
		httplimit.WithClassFrom(httplimit.HeaderClass("x-priority", map[string]string{"critical": "critical", "p0": "critical"}, trustLoopback)),
		httplimit.WithBypass(func(r *http.Request) bool { return r.URL.Path == "/healthz" }))
	srv := newServer(t, mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		class, _ := adaptivelimit.ClassFromContext(r.Context())
		_, _ = io.WriteString(w, class)
	})))
	held, err := l.Acquire() // the shared slot: the lowest class may use nothing else
	require.NoError(t, err)

	for _, tc := range []struct {
		header []string
		status int
		class  string
	}{
		{nil, 503, ""},
		{[]string{"X-Priority", "critical"}, 200, "critical"},
		{[]string{"X-Priority", "p0"}, 200, "critical"},
		{[]string{"X-Priority", "Critical"}, 503, ""}, // not listed
		{[]string{"X-Priority", "0"}, 503, ""},        // never a number
		{[]string{"X-Priority", "batch"}, 503, ""},    // a class, but not listed
		{[]string{"X-Other", "critical"}, 503, ""},
	} {
		status, body := get(t, srv.Client(), srv.URL, tc.header...)
		require.Equal(t, tc.status, status, "%v", tc.header)
		if status == 200 {
			require.Equal(t, tc.class, body)
		}
	}
	snap := l.Snapshot()
	require.Equal(t, uint64(5), snap.Rejected)
	require.Equal(t, uint64(5), snap.Classes[1].Rejected)

	windows := snap.Windows
	status, _ := get(t, srv.Client(), srv.URL+"/healthz")
	require.Equal(t, 200, status, "bypassed while the limit is full")
	require.Equal(t, uint64(5), l.Snapshot().Rejected)
	require.Equal(t, windows, l.Snapshot().Windows)
	held.Done(nil)
	require.Zero(t, l.InFlight())
}

// The Transport sends the context's class in the header it is told, and takes its own
// slot for that class; a server's HeaderClass reads it. Bypassed requests go around.
func TestTransportClasses(t *testing.T) {
	server := limittest.Classed(t, "server", 2)
	mw := httplimit.Middleware(server, httplimit.WithClassFrom(httplimit.HeaderClass("X-Priority", map[string]string{"critical": "critical"}, trustLoopback)))
	var seen []string
	srv := newServer(t, mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("X-Priority"))
	})))
	client := limittest.Classed(t, "client", 2)
	c := &http.Client{Transport: httplimit.Transport(client, srv.Client().Transport,
		httplimit.WithClassHeader("x-priority"),
		httplimit.WithBypass(func(r *http.Request) bool { return r.Method == http.MethodOptions }))}
	held, err := client.Acquire()
	require.NoError(t, err)

	req, err := http.NewRequestWithContext(adaptivelimit.WithClass(context.Background(), "critical"), http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := c.Do(req)
	require.NoError(t, err, "the client's critical reserve")
	require.NoError(t, resp.Body.Close())
	require.Empty(t, req.Header, "the caller's request is not changed")

	_, err = c.Get(srv.URL)
	require.ErrorIs(t, err, adaptivelimit.ErrLimitExceeded, "no class: the lowest, whose slot is held")

	bare := &http.Request{Method: http.MethodGet, URL: req.URL, Host: req.URL.Host} // no Header
	resp, err = c.Transport.RoundTrip(bare.WithContext(adaptivelimit.WithClass(context.Background(), "critical")))
	require.NoError(t, err, "a request without a Header map")
	require.NoError(t, resp.Body.Close())

	req, err = http.NewRequest(http.MethodOptions, srv.URL, nil)
	require.NoError(t, err)
	resp, err = c.Do(req)
	require.NoError(t, err, "bypassed")
	require.NoError(t, resp.Body.Close())
	require.Equal(t, []string{"critical", "critical", ""}, seen)
	require.Equal(t, uint64(1), client.Snapshot().Rejected)
	held.Done(nil)
	require.Zero(t, client.InFlight())
	require.Zero(t, server.InFlight())
}
