package bench

import (
	"testing"

	"github.com/resilience4cata/adaptivelimit"
)

// BenchmarkAdmit measures an admitted call, Acquire then Done(nil). The limit is far above
// the calls in flight, so nothing is rejected, and windows close once a second as in
// production: a window's close is amortised over the calls of that second.
// With -cpu=1 it is one goroutine; with -cpu=N, N goroutines share the limiter.
func BenchmarkAdmit(b *testing.B) {
	for _, a := range algorithms {
		for _, c := range limiterClocks {
			b.Run("alg="+a.name+"/clock="+c.name, func(b *testing.B) {
				l := newLimiter(b, adaptivelimit.Config{
					Algorithm:    a.alg,
					Clock:        c.clock,
					InitialLimit: 1000,
					MaxLimit:     1000,
				})
				runParallel(b, "rejections", func(pb *testing.PB) (rejected int64) {
					for pb.Next() {
						p, err := l.Acquire()
						if err != nil {
							rejected++
							continue
						}
						p.Done(nil)
					}
					return rejected
				})
			})
		}
	}
}
