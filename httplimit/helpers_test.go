package httplimit_test

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"
)

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
