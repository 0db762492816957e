package httplimit

import (
	"net/http"
	"time"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/integration"
)

// Middleware returns a middleware that runs each request inside l. A request that finds the
// limit full gets the rejection status (503 by default, see WithRejectionStatus), a
// Retry-After header (see WithRetryAfter) and a short plain-text body, and the handler is
// not called. Where l has a MaxWait, a request waits for a slot that long at most, and no
// longer than its context lasts; a limiter without one rejects at once.
//
// The handler's latency, from the request's admission to the handler's return, is the
// call's latency; the outcome function (DefaultServerOutcome, see WithServerOutcome) decides
// from the status it wrote whether that is a sample, a drop or nothing. A handler or an
// outcome function that panics frees its slot without a sample, and the panic goes on to
// net/http's own recovery.
//
// The ResponseWriter that the handler gets is an http.Flusher, and unwraps to the server's
// for http.ResponseController.
//
// Middleware panics if l is nil or an option is invalid.
func Middleware(l *adaptivelimit.Limiter, opts ...ServerOption) func(http.Handler) http.Handler {
	o := newServerOptions(l, opts)
	rejection := rejection{
		status:     o.status,
		retryAfter: retryAfterHeader(o.retryAfter),
		body:       []byte(http.StatusText(o.status) + "\n"),
	}
	return func(next http.Handler) http.Handler {
		return &handler{l: l, next: next, o: o, rejection: rejection}
	}
}

type handler struct {
	l         *adaptivelimit.Limiter
	next      http.Handler
	o         serverOptions
	rejection rejection
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.o.bypass(r) {
		h.next.ServeHTTP(w, r)
		return
	}
	p, r, err := h.o.acquire(r)
	if err != nil {
		h.rejection.write(w)
		return
	}
	defer p.Cancel() // the handler or the outcome function panicked: Finish has not cleared p
	sw := statusWriter{ResponseWriter: w}
	h.next.ServeHTTP(&sw, r)
	status := sw.status
	if status == 0 {
		status = http.StatusOK
	}
	p.Finish(h.o.outcome(r, status))
}

// retryAfterHeader returns the Retry-After value for d, or nil for no header.
func retryAfterHeader(d time.Duration) []string {
	if v := integration.RetryHint(d, time.Second); v != "" {
		return []string{v}
	}
	return nil
}

// rejection is the response to a rejected request, built once so that writing it allocates
// nothing but what the ResponseWriter does.
type rejection struct {
	status     int
	retryAfter []string
	body       []byte
}

var (
	textPlain = []string{"text/plain; charset=utf-8"}
	nosniff   = []string{"nosniff"}
)

func (rj *rejection) write(w http.ResponseWriter) {
	h := w.Header()
	// The values are shared by every rejection: the keys are already canonical, and
	// assigning the slices, unlike Header.Set, allocates none.
	h["Content-Type"] = textPlain
	h["X-Content-Type-Options"] = nosniff
	if rj.retryAfter != nil {
		h["Retry-After"] = rj.retryAfter
	}
	w.WriteHeader(rj.status)
	_, _ = w.Write(rj.body)
}

// statusWriter records the status that the handler writes.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 { // 1xx are informational: the final status comes later
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush flushes the underlying ResponseWriter, if it can.
func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap returns the underlying ResponseWriter, for http.ResponseController.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
