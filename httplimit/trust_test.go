package httplimit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/httplimit"
)

// trustLoopback trusts the class of the tests' own clients, which reach the servers over
// 127.0.0.1.
var trustLoopback = httplimit.TrustNetworks(netip.MustParsePrefix("127.0.0.0/8"))

// readme is the limiter of the README's "Priorities" section.
func readme(t *testing.T, name string) *adaptivelimit.Limiter {
	t.Helper()
	l, err := adaptivelimit.New(adaptivelimit.Config{Name: name, Classes: []adaptivelimit.Class{
		{Name: "critical", Reserve: 0.3}, {Name: "standard", Reserve: 0.4}, {Name: "sheddable"},
	}})
	require.NoError(t, err)
	return l
}

// classEcho answers with the class of the request's context and the class header it
// received, as "class|header".
var classEcho = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	class, _ := adaptivelimit.ClassFromContext(r.Context())
	_, _ = fmt.Fprintf(w, "%s|%s", class, r.Header.Get(httplimit.DefaultClassHeader))
})

// The README's setup: a client outside the trusted network that sends x-criticality:
// critical is served as the lowest class; one inside it, as critical.
func TestUntrustedClientCannotPromoteItself(t *testing.T) {
	allowed := map[string]string{"critical": "critical", "standard": "standard"}
	for _, tc := range []struct {
		name    string
		trusted func(*http.Request) bool
		want    string
	}{
		{"outside 10.0.0.0/8", httplimit.TrustNetworks(netip.MustParsePrefix("10.0.0.0/8")), "|critical"},
		{"no network", httplimit.TrustNetworks(), "|critical"},
		{"inside 127.0.0.0/8", trustLoopback, "critical|critical"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, httplimit.Middleware(readme(t, "api"),
				httplimit.WithClassFrom(httplimit.HeaderClass(httplimit.DefaultClassHeader, allowed, tc.trusted)))(classEcho))
			status, body := get(t, srv.Client(), srv.URL, "X-Criticality", "critical")
			require.Equal(t, http.StatusOK, status)
			require.Equal(t, tc.want, body)
		})
	}
}

// A proxy built from Middleware, which lists only gold and trusts only callers with the
// partner's token, and a ReverseProxy over Transport: an outside client's x-criticality is
// not passed on to the backend, which trusts the proxy's network and would grant it; the
// gold of a trusted caller is.
func TestProxyDoesNotPassOnClientClass(t *testing.T) {
	backend := newServer(t, httplimit.Middleware(readme(t, "backend"),
		httplimit.WithClassFrom(httplimit.HeaderClass(httplimit.DefaultClassHeader,
			map[string]string{"critical": "critical", "gold": "standard"}, trustLoopback)))(classEcho))
	target, err := url.Parse(backend.URL)
	require.NoError(t, err)
	proxyLimiter, err := adaptivelimit.New(adaptivelimit.Config{Name: "proxy", Classes: []adaptivelimit.Class{
		{Name: "gold", Reserve: 0.5}, {Name: "standard"},
	}})
	require.NoError(t, err)
	partner := func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer partner" }
	proxy := newServer(t, httplimit.Middleware(proxyLimiter,
		httplimit.WithClassFrom(httplimit.HeaderClass(httplimit.DefaultClassHeader, map[string]string{"gold": "gold"}, partner)),
	)(&httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport: httplimit.Transport(proxyLimiter, backend.Client().Transport),
	}))

	var got []string
	for _, header := range [][]string{
		{"X-Criticality", "critical"}, // not listed by the proxy
		{"X-Criticality", "gold"},     // listed, but not trusted
		{"X-Criticality", "gold", "Authorization", "Bearer partner"},
	} {
		status, body := get(t, proxy.Client(), proxy.URL, header...)
		require.Equal(t, http.StatusOK, status, "%v", header)
		got = append(got, body)
	}
	require.Equal(t, []string{"|", "|", "standard|gold"}, got, "the backend's class|header")
}

// Transport sends the context's class in place of any value the request carries, removes
// the header from a request whose context has none, bypassed or not, and never changes the
// caller's request.
func TestTransportReplacesClass(t *testing.T) {
	var seen []string
	srv := newServer(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		seen = append(seen, fmt.Sprint(r.Header.Values(httplimit.DefaultClassHeader)))
	}))
	c := &http.Client{Transport: httplimit.Transport(readme(t, "client"), srv.Client().Transport,
		httplimit.WithBypass(func(r *http.Request) bool { return r.Method == http.MethodOptions }))}
	for _, tc := range []struct {
		method, class string
		header        []string
	}{
		{http.MethodGet, "", []string{"critical"}},
		{http.MethodGet, "standard", []string{"critical", "sheddable"}},
		{http.MethodGet, "standard", []string{"standard"}},
		{http.MethodGet, "standard", nil},
		{http.MethodOptions, "", []string{"critical"}},
		{http.MethodOptions, "standard", []string{"critical"}},
	} {
		ctx := context.Background()
		if tc.class != "" {
			ctx = adaptivelimit.WithClass(ctx, tc.class)
		}
		req, err := http.NewRequestWithContext(ctx, tc.method, srv.URL, nil)
		require.NoError(t, err)
		for _, v := range tc.header {
			req.Header.Add(httplimit.DefaultClassHeader, v)
		}
		resp, err := c.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, tc.header, req.Header.Values(httplimit.DefaultClassHeader), "the caller's request is not changed")
	}
	require.Equal(t, []string{"[]", "[standard]", "[standard]", "[standard]", "[]", "[standard]"}, seen)
}

// HeaderClass without its trusted panics when Middleware is built; TrustNetworks panics on
// a network that is not valid.
func TestHeaderClassNeedsTrust(t *testing.T) {
	l := readme(t, "api")
	require.PanicsWithValue(t, "httplimit: HeaderClass with a nil trusted", func() {
		httplimit.Middleware(l, httplimit.WithClassFrom(httplimit.HeaderClass(httplimit.DefaultClassHeader, map[string]string{"critical": "critical"}, nil)))
	})
	require.PanicsWithValue(t, "httplimit: TrustNetworks: network 1 (invalid Prefix) is not valid", func() {
		httplimit.TrustNetworks(netip.MustParsePrefix("10.0.0.0/8"), netip.Prefix{})
	})
}
