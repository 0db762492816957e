package bench

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/resilience4cata/adaptivelimit"
)

// BenchmarkWait measures AcquireContext then Done(nil) on a limiter whose callers may wait.
// With a free limit ("free") nobody waits: it is Admit's call through AcquireContext. With a
// limit of 1 ("handoff"), four goroutines a P and a yield while holding the slot, nearly
// every call waits for a slot that another's Done hands over: a wait, a handoff and a
// wake-up.
func BenchmarkWait(b *testing.B) {
	for _, tc := range []struct {
		name    string
		limit   int
		handoff bool
	}{{"free", 1000, false}, {"handoff", 1, true}} {
		b.Run("limit="+tc.name, func(b *testing.B) {
			l := newLimiter(b, adaptivelimit.Config{
				InitialLimit: tc.limit, MinLimit: tc.limit, MaxLimit: tc.limit, MaxWait: time.Minute,
				MaxWaiters: 1000,
			})
			ctx := context.Background()
			if tc.handoff {
				b.SetParallelism(4)
			}
			runParallel(b, "rejections", func(pb *testing.PB) (rejected int64) {
				for pb.Next() {
					p, err := l.AcquireContext(ctx)
					if err != nil {
						rejected++
						continue
					}
					if tc.handoff {
						runtime.Gosched()
					}
					p.Done(nil)
				}
				return rejected
			})
			if tc.handoff && l.Snapshot().WaitAbandoned != 0 {
				b.Errorf("%d callers gave up waiting", l.Snapshot().WaitAbandoned)
			}
		})
	}
}
