package httplimit_test

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/resilience4cata/adaptivelimit"
)

// newLimiter returns a limiter on a ManualClock whose window of 1 s closes after a single
// call, so that the snapshot tells how a call was classified.
func newLimiter(t *testing.T, limit int) (*adaptivelimit.Limiter, *adaptivelimit.ManualClock) {
	t.Helper()
	clock := adaptivelimit.NewManualClock()
	l, err := adaptivelimit.New(adaptivelimit.Config{
		Name: "api", MinLimit: limit, MaxLimit: limit, InitialLimit: limit,
		MinWindowSamples: 1, Window: time.Second, Clock: clock,
	})
	require.NoError(t, err)
	return l, clock
}

// classified reads how the single finished call of l was classified: "sample", "drop", or
// "none" when its slot was freed without a sample.
func classified(t *testing.T, l *adaptivelimit.Limiter) string {
	t.Helper()
	s := l.Snapshot()
	require.Zero(t, s.InFlight, "the slot is freed")
	switch {
	case s.Windows == 0:
		return "none"
	case s.Last.Samples == 1 && s.Last.Drops == 1:
		return "drop"
	case s.Last.Samples == 1 && s.Last.Drops == 0:
		return "sample"
	}
	t.Fatalf("unexpected window: %+v", s.Last)
	return ""
}

// newServer starts a loopback server whose handler is h; the server's own log is discarded,
// since some tests panic on purpose.
func newServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// served wraps h so that each request sends on done once h has returned.
func served(h http.Handler, done chan<- struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { done <- struct{}{} }()
		h.ServeHTTP(w, r)
	})
}
