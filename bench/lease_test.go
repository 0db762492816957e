package bench

import (
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/resilience4cata/adaptivelimit"
)

// BenchmarkLease measures Acquire then Done(nil) in the three regimes of the per-P slot
// leases, on a fixed limit, one goroutine a P: "far", a limit of 1000, far above the callers,
// where each P takes slots from its own cache; "equal", a limit of GOMAXPROCS, as many slots
// as callers, so that no call is rejected but slots move between Ps through the shared count;
// and "one", a limit of 1 shared by every P, where all but one of the callers at any moment
// are rejected. Each reports the share of calls admitted.
func BenchmarkLease(b *testing.B) {
	for _, regime := range []string{"far", "equal", "one"} {
		b.Run("regime="+regime, func(b *testing.B) {
			limit := map[string]int{"far": 1000, "equal": runtime.GOMAXPROCS(0), "one": 1}[regime]
			l := newLimiter(b, adaptivelimit.Config{InitialLimit: limit, MinLimit: limit, MaxLimit: limit})
			var admitted atomic.Int64
			runParallel(b, "", func(pb *testing.PB) int64 {
				var n int64
				for pb.Next() {
					if p, err := l.Acquire(); err == nil {
						n++
						p.Done(nil)
					}
				}
				admitted.Add(n)
				return 0
			})
			if regime != "one" {
				expectNone(b, int64(b.N)-admitted.Load(), "rejections")
			}
			b.ReportMetric(100*float64(admitted.Load())/float64(b.N), "%admitted")
		})
	}
}
