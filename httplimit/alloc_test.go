package httplimit_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resilience4cata/adaptivelimit/httplimit"
	"github.com/resilience4cata/adaptivelimit/limittest"
)

// discardWriter is a ResponseWriter that allocates nothing, so that what a test counts is
// what the middleware allocates.
type discardWriter struct{ header http.Header }

func (w *discardWriter) Header() http.Header         { return w.header }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}

// Rejecting a request allocates nothing beyond what the ResponseWriter does.
func TestMiddlewareRejectionAllocs(t *testing.T) {
	l, _ := limittest.Fixed(t, "api", 1)
	_, err := l.Acquire()
	require.NoError(t, err)
	h := httplimit.Middleware(l)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		t.Fatal("the handler is called")
	}))
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	w := &discardWriter{header: http.Header{}}
	require.Zero(t, testing.AllocsPerRun(1000, func() { h.ServeHTTP(w, r) }))
	require.Equal(t, []string{"1"}, w.header["Retry-After"])

	// On a real writer, a rejection costs what writing the same response by hand costs.
	written := testing.AllocsPerRun(100, func() {
		w := httptest.NewRecorder()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("Service Unavailable\n"))
	})
	rejected := testing.AllocsPerRun(100, func() { h.ServeHTTP(httptest.NewRecorder(), r) })
	require.LessOrEqual(t, rejected, written)
}

// A rejection of a class's request allocates nothing either, on a limiter without MaxWait:
// the class's context is built only for an admitted request.
func TestMiddlewareClassRejectionAllocs(t *testing.T) {
	l := limittest.Classed(t, "api", 2)
	finish := limittest.HoldClassed(t, l)
	defer finish()
	h := httplimit.Middleware(l, httplimit.WithClassFrom(func(*http.Request) string { return "critical" }))(
		http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Fatal("the handler is called") }))
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	w := &discardWriter{header: http.Header{}}
	require.Zero(t, testing.AllocsPerRun(1000, func() { h.ServeHTTP(w, r) }))
}

// Nor does one whose class a HeaderClass reads, trusting the request by its network: the
// check parses RemoteAddr in place.
func TestMiddlewareTrustedClassRejectionAllocs(t *testing.T) {
	l := limittest.Classed(t, "api", 2)
	finish := limittest.HoldClassed(t, l)
	defer finish()
	h := httplimit.Middleware(l, httplimit.WithClassFrom(httplimit.HeaderClass(httplimit.DefaultClassHeader,
		map[string]string{"critical": "critical"}, httplimit.TrustNetworks(netip.MustParsePrefix("192.0.2.0/24")))))(
		http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Fatal("the handler is called") }))
	r := httptest.NewRequest(http.MethodGet, "/", nil) // from 192.0.2.1
	r.Header.Set(httplimit.DefaultClassHeader, "critical")
	w := &discardWriter{header: http.Header{}}
	require.Zero(t, testing.AllocsPerRun(1000, func() { h.ServeHTTP(w, r) }))
	require.Equal(t, uint64(1001), l.Snapshot().Classes[0].Rejected, "critical, trusted: AllocsPerRun's warm-up and its 1000 runs")
}
