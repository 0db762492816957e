package bench

import (
	"strconv"
	"testing"

	"github.com/resilience4cata/adaptivelimit/bench/internal/floor"
)

// BenchmarkFloor measures the least an admitted call can cost: a fixed bulkhead's acquire and
// release, plus the clock reads the limiter makes (two to time a call; one where only the
// window's end is checked).
func BenchmarkFloor(b *testing.B) {
	b.Run("clock=none/reads=0", func(b *testing.B) { benchFloor(b, nil, 0) })
	for _, c := range floorClocks {
		for _, reads := range []int{2, 1} {
			b.Run("clock="+c.name+"/reads="+strconv.Itoa(reads), func(b *testing.B) {
				benchFloor(b, c.read, reads)
			})
		}
	}
}

func benchFloor(b *testing.B, read func() int64, reads int) {
	f := floor.New(1000)
	runParallel(b, "rejections", func(pb *testing.PB) (rejected int64) {
		var sum int64
		for pb.Next() {
			if !f.TryAcquire() {
				rejected++
				continue
			}
			for range reads {
				sum += read()
			}
			f.Release()
		}
		sink.Add(sum)
		return rejected
	})
}
