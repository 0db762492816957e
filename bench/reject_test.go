package bench

import (
	"errors"
	"testing"

	"github.com/failsafe-go/failsafe-go/adaptivelimiter"
	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/bench/internal/floor"
)

// BenchmarkReject measures a call that finds the limit full: every slot (one) is held for the
// whole run, so every Acquire in the loop is rejected.
func BenchmarkReject(b *testing.B) {
	b.Run("impl=adaptivelimit", func(b *testing.B) {
		l := newLimiter(b, adaptivelimit.Config{InitialLimit: 1, MinLimit: 1, MaxLimit: 1})
		held, err := l.Acquire()
		if err != nil {
			b.Fatal(err)
		}
		defer held.Cancel()
		if _, err := l.Acquire(); !errors.Is(err, adaptivelimit.ErrLimitExceeded) {
			b.Fatalf("Acquire on a full limit: %v, want ErrLimitExceeded", err)
		}
		runParallel(b, "admissions", func(pb *testing.PB) (admitted int64) {
			for pb.Next() {
				if _, err := l.Acquire(); err == nil {
					admitted++
				}
			}
			return admitted
		})
	})
	b.Run("impl=floor", func(b *testing.B) {
		f := floor.New(1)
		f.TryAcquire()
		runParallel(b, "admissions", func(pb *testing.PB) (admitted int64) {
			for pb.Next() {
				if f.TryAcquire() {
					admitted++
				}
			}
			return admitted
		})
	})
	b.Run("impl=failsafe", func(b *testing.B) {
		l := adaptivelimiter.NewBuilder[any]().WithLimits(1, 1, 1).Build()
		if _, ok := l.TryAcquirePermit(); !ok {
			b.Fatal("failsafe: first permit refused")
		}
		runParallel(b, "admissions", func(pb *testing.PB) (admitted int64) {
			for pb.Next() {
				if _, ok := l.TryAcquirePermit(); ok {
					admitted++
				}
			}
			return admitted
		})
	})
}
