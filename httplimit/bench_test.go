package httplimit_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/httplimit"
	"github.com/resilience4cata/adaptivelimit/limittest"
)

// The middleware's own cost, on a limiter without MaxWait: a rejected request (every slot
// held) and an admitted one (a handler that does nothing), classless and for a class.
func BenchmarkMiddleware(b *testing.B) {
	critical := httplimit.WithClassFrom(func(*http.Request) string { return "critical" })
	for _, bc := range []struct {
		name   string
		l      func(b *testing.B) *adaptivelimit.Limiter
		opts   []httplimit.ServerOption
		reject bool
	}{
		{"Reject", fixed, nil, true},
		{"Admit", fixed, nil, false},
		{"RejectClass", classed, []httplimit.ServerOption{critical}, true},
		{"AdmitClass", classed, []httplimit.ServerOption{critical}, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			l := bc.l(b)
			if bc.reject {
				for {
					p, err := l.AcquireClass("critical")
					if err != nil {
						break
					}
					b.Cleanup(p.Cancel)
				}
			}
			h := httplimit.Middleware(l, bc.opts...)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			w := &discardWriter{header: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, r)
			}
		})
	}
}

func fixed(b *testing.B) *adaptivelimit.Limiter {
	l, _ := limittest.Fixed(b, "api", 4)
	return l
}

func classed(b *testing.B) *adaptivelimit.Limiter { return limittest.Classed(b, "api", 4) }
