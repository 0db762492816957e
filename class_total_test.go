package adaptivelimit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The short pool: hi and lo hold 10 slots each under a limit of 20, the limit falls to 10,
// and 10 hi calls and 1 lo call finish: 9 calls hold a slot under a limit of 10. Of two hi
// calls made at the same instant one is admitted, never both. The fixed-share pools admitted
// both in every run at GOMAXPROCS 2 (issue 27). Also for a limiter built at GOMAXPROCS 1,
// without leases, whose calls take their slots by another path, and then raised.
func TestClassHardTotalShortPool(t *testing.T) {
	for _, alone := range []bool{false, true} {
		t.Run(fmt.Sprintf("built alone=%v", alone), func(t *testing.T) {
			classHardTotalShortPool(t, alone)
		})
	}
}

func classHardTotalShortPool(t *testing.T, alone bool) {
	classes := []Class{{"hi", 0.5}, {"lo", 0}}
	before := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(before)
	for range 1000 {
		var l *Limiter
		if alone {
			runtime.GOMAXPROCS(1)
			l = newClassed(t, 20, classes)
			runtime.GOMAXPROCS(max(before, 2))
			require.False(t, l.leases)
		} else {
			l = newClassed(t, 20, classes)
		}
		lo := acquireClassN(t, l, "lo", 10)
		hi := acquireClassN(t, l, "hi", 10)
		require.Equal(t, int64(10), l.setLimit(8)) // 8, with hi's never-lent 2 on top
		finishAll(hi)
		lo[0].Done(nil) // 9 held under 10
		var permits [2]Permit
		var admitted [2]bool
		var ready, start atomic.Int64
		var wg sync.WaitGroup
		for i := range permits {
			wg.Go(func() {
				if ready.Add(1) == 2 {
					start.Store(1)
				}
				for start.Load() == 0 { // spin, so that both call at the same instant
					if runtime.GOMAXPROCS(0) == 1 {
						runtime.Gosched() // but where the other needs this P
					}
				}
				p, err := l.AcquireClass("hi")
				permits[i], admitted[i] = p.Move(), err == nil
			})
		}
		wg.Wait()
		require.False(t, admitted[0] && admitted[1], "both admitted: 11 calls hold a slot under a limit of 10")
		require.True(t, admitted[0] || admitted[1], "one slot was free")
		require.Equal(t, 10, l.InFlight())
		finishAll(permits[:])
		finishAll(lo[1:])
		requireIdle(t, l)
	}
}

// The hard total while the limit moves up and down beside calls of every class, with and
// without waiters, and no window closing (run with -race -cpu=1,2,4,8): the calls holding a
// slot never exceed the limit they were admitted under. A controller moves the limit. Each
// call registers in the current generation before it asks for a slot; a lower limit starts
// a new generation, and only once every call of the older ones has finished is the bound
// that the calls are held to lowered to it. A higher limit raises the bound first.
func TestClassHardTotal(t *testing.T) {
	classes := []Class{{"critical", 0.2}, {"standard", 0.3}, {"sheddable", 0}}
	for _, wait := range []time.Duration{0, time.Millisecond} {
		t.Run(fmt.Sprintf("MaxWait=%v", wait), func(t *testing.T) {
			l, err := New(Config{Classes: classes, InitialLimit: 8, MinLimit: 1, MaxLimit: 64,
				MaxWait: wait, Clock: NewManualClock()}) // the clock stands still: no window closes
			require.NoError(t, err)
			classHardTotal(t, l, 8, 3000)
		})
	}
}

func classHardTotal(t *testing.T, l *Limiter, workers, calls int) {
	var gen atomic.Int64
	var active [2]atomic.Int64
	var bound, held atomic.Int64
	bound.Store(l.slots.limit.Load())
	var failed atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 27))
			ctx := context.Background()
			names := l.classes.names
			for range calls {
				g := gen.Load()
				active[g&1].Add(1)
				if gen.Load() != g { // registered too late for g: try again in the new one
					active[g&1].Add(-1)
					continue
				}
				name := names[r.IntN(len(names))]
				var p Permit
				var err error
				if r.IntN(2) == 0 {
					p, err = l.AcquireClass(name)
				} else {
					p, err = l.AcquireContext(WithClass(ctx, name))
				}
				if err == nil {
					before := bound.Load()
					n := held.Add(1)
					if most := max(before, bound.Load()); n > most {
						failed.CompareAndSwap(nil, fmt.Sprintf("%d calls hold a slot under a limit of %d", n, most))
					}
					runtime.Gosched()
					held.Add(-1)
					p.Done(nil)
				}
				active[g&1].Add(-1)
			}
		})
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r := rand.New(rand.NewPCG(1, 27))
		for {
			select {
			case <-stop:
				return
			default:
			}
			estimate := int64(1 + r.IntN(12))
			next := l.classes.limitAt(estimate, int64(l.cfg.MaxLimit)) // with the never-lent parts on top
			if next >= l.slots.limit.Load() {
				bound.Store(next)
				l.setLimit(estimate)
				l.passOn()
				continue
			}
			l.setLimit(estimate)
			g := gen.Add(1) - 1
			for active[g&1].Load() != 0 {
				select {
				case <-stop:
					return
				default:
					runtime.Gosched()
				}
			}
			bound.Store(next)
		}
	}()
	wg.Wait()
	close(stop)
	<-done
	require.Nil(t, failed.Load())
	requireIdle(t, l)
}
