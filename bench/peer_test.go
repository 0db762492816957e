package bench

import (
	"testing"

	"github.com/failsafe-go/failsafe-go/adaptivelimiter"
	"golang.org/x/sync/semaphore"

	"github.com/resilience4cata/adaptivelimit/bench/internal/naive"
)

// BenchmarkPeer measures an admitted call through other limits, in the same run as
// BenchmarkAdmit: failsafe-go's adaptive limiter, the obvious mutex-guarded adaptive limit
// (naive), and two fixed semaphores that read no clock (compare those with
// Floor/clock=none/reads=0).
func BenchmarkPeer(b *testing.B) {
	b.Run("peer=failsafe", func(b *testing.B) {
		// min = max = initial: failsafe-go's limit never falls under the calls in flight.
		l := adaptivelimiter.NewBuilder[any]().WithLimits(1000, 1000, 1000).Build()
		runParallel(b, "rejections", func(pb *testing.PB) (rejected int64) {
			for pb.Next() {
				p, ok := l.TryAcquirePermit()
				if !ok {
					rejected++
					continue
				}
				p.Record()
			}
			return rejected
		})
	})
	b.Run("peer=naive", func(b *testing.B) {
		l := naive.New(1000, 1000)
		runParallel(b, "rejections", func(pb *testing.PB) (rejected int64) {
			for pb.Next() {
				start, ok := l.Acquire()
				if !ok {
					rejected++
					continue
				}
				l.Done(start)
			}
			return rejected
		})
	})
	b.Run("peer=semaphore", func(b *testing.B) {
		s := semaphore.NewWeighted(1000)
		runParallel(b, "rejections", func(pb *testing.PB) (rejected int64) {
			for pb.Next() {
				if !s.TryAcquire(1) {
					rejected++
					continue
				}
				s.Release(1)
			}
			return rejected
		})
	})
	b.Run("peer=chan", func(b *testing.B) {
		slots := make(chan struct{}, 1000)
		runParallel(b, "rejections", func(pb *testing.PB) (rejected int64) {
			for pb.Next() {
				select {
				case slots <- struct{}{}:
				default:
					rejected++
					continue
				}
				<-slots
			}
			return rejected
		})
	})
}
