package bench

import (
	"sync/atomic"
	"testing"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/bench/internal/floor"
)

// overloadLimit and overloadCallers make the mixed overload: a fixed limit of 2 shared by 4
// goroutines per P, so that nearly every attempt is rejected while a few calls run.
const (
	overloadLimit   = 2
	overloadCallers = 4 // per P
)

// BenchmarkOverload measures a service past its limit: overloadCallers goroutines per P loop
// on Acquire, a short piece of work (work) when admitted, and Done, against the limit of
// overloadLimit. The floor does the same on the fixed bulkhead, with the two clock reads that
// time a call. ns/op is per attempt, admitted or not; %admitted is the share admitted.
func BenchmarkOverload(b *testing.B) {
	b.Run("impl=adaptivelimit", func(b *testing.B) {
		l := newLimiter(b, adaptivelimit.Config{InitialLimit: overloadLimit, MinLimit: overloadLimit, MaxLimit: overloadLimit})
		overload(b, func() bool {
			p, err := l.Acquire()
			if err != nil {
				return false
			}
			work()
			p.Done(nil)
			return true
		})
	})
	b.Run("impl=floor", func(b *testing.B) {
		f := floor.New(overloadLimit)
		read := tickRead()
		overload(b, func() bool {
			if !f.TryAcquire() {
				return false
			}
			start := read()
			work()
			sink.Add(read() - start)
			f.Release()
			return true
		})
	})
}

func overload(b *testing.B, attempt func() bool) {
	overloadRound(b, func(int) bool { return attempt() })
}

// overloadRound is overload with attempt given the caller's count of its attempts so far.
func overloadRound(b *testing.B, attempt func(i int) bool) {
	var admitted, total atomic.Int64
	b.SetParallelism(overloadCallers)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var n, all int64
		for pb.Next() {
			if attempt(int(all)) {
				n++
			}
			all++
		}
		admitted.Add(n)
		total.Add(all)
	})
	b.StopTimer()
	if admitted.Load() == 0 {
		b.Error("no call admitted")
	}
	b.ReportMetric(100*float64(admitted.Load())/float64(max(total.Load(), 1)), "%admitted")
}

// workSink keeps work's result alive.
var workSink uint64

// work is the admitted call's work: a few dozen dependent operations, some tens of
// nanoseconds, so that slots are held long enough for other callers to find the limit full.
//
//go:noinline
func work() {
	x := uint64(0x9E3779B97F4A7C15)
	for range 32 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	if x == 0 {
		workSink++
	}
}

// BenchmarkSolo measures one goroutine's Acquire then Done(nil) whatever GOMAXPROCS is: a
// service whose calls seldom overlap, on a machine of many cores. The limiter is built after
// -cpu has set GOMAXPROCS, as a server builds it.
func BenchmarkSolo(b *testing.B) {
	for _, a := range algorithms {
		b.Run("alg="+a.name+"/clock=ticks", func(b *testing.B) {
			l := newLimiter(b, adaptivelimit.Config{Algorithm: a.alg, Clock: adaptivelimit.TickClock(),
				InitialLimit: 1000, MaxLimit: 1000})
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				p, err := l.Acquire()
				if err != nil {
					b.Fatal(err)
				}
				p.Done(nil)
			}
		})
	}
}
