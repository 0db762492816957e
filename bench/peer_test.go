package bench

import (
	"sync/atomic"
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
		var rejected atomic.Int64
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p, ok := l.TryAcquirePermit()
				if !ok {
					rejected.Add(1)
					continue
				}
				p.Record()
			}
		})
		expectNone(b, rejected.Load(), "rejections")
	})
	b.Run("peer=naive", func(b *testing.B) {
		l := naive.New(1000, 1000)
		var rejected atomic.Int64
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				start, ok := l.Acquire()
				if !ok {
					rejected.Add(1)
					continue
				}
				l.Done(start)
			}
		})
		expectNone(b, rejected.Load(), "rejections")
	})
	b.Run("peer=semaphore", func(b *testing.B) {
		s := semaphore.NewWeighted(1000)
		var rejected atomic.Int64
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if !s.TryAcquire(1) {
					rejected.Add(1)
					continue
				}
				s.Release(1)
			}
		})
		expectNone(b, rejected.Load(), "rejections")
	})
	b.Run("peer=chan", func(b *testing.B) {
		slots := make(chan struct{}, 1000)
		var rejected atomic.Int64
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				select {
				case slots <- struct{}{}:
				default:
					rejected.Add(1)
					continue
				}
				<-slots
			}
		})
		expectNone(b, rejected.Load(), "rejections")
	})
}
