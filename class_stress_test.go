package adaptivelimit

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Many goroutines in three classes, twice as many as the slots or more, each holding its slot
// across a yield, on the real clock (bounded by a count of calls; run with -cpu=1,2,4,8 and
// the race detector): the calls
// holding a slot never exceed the limit, no class holds more than the limit less the
// never-lent parts of the reserves above it, no count of the calls in flight is above the
// goroutines, and nothing is left in flight. With a moving limit the bounds are those of
// MaxLimit (TestClassHardTotal holds a moving limit to the limit itself).
func TestClassStress(t *testing.T) {
	classes := []Class{{"critical", 0.2}, {"standard", 0.3}, {"sheddable", 0}}
	for _, v := range []struct {
		name string
		c    Config
	}{
		{"fixed", Config{InitialLimit: 20, MinLimit: 20, MaxLimit: 20}},
		{"moving", Config{Algorithm: AIMD, InitialLimit: 20, MinLimit: 4, MaxLimit: 40}},
		{"waiting", Config{InitialLimit: 20, MinLimit: 20, MaxLimit: 20, MaxWait: time.Millisecond}},
	} {
		t.Run(v.name, func(t *testing.T) {
			v.c.Classes, v.c.Window, v.c.MinWindowSamples = classes, time.Millisecond, 1
			l, err := New(v.c)
			require.NoError(t, err)
			// More goroutines than slots at any GOMAXPROCS, so that the limit and the ceilings
			// bind: with fewer, an over-admitting limiter would pass.
			classStress(t, l, max(6*runtime.GOMAXPROCS(0), 2*v.c.MaxLimit), 1500)
		})
	}
}

// classBounds returns, for a limit, the most calls each class may hold: the limit less the
// never-lent parts, half rounded up, of the reserves above it.
func classBounds(classes []Class, limit int) []int {
	bounds, kept := make([]int, len(classes)), 0
	for i, c := range classes {
		bounds[i] = limit - kept
		r := int(c.Reserve * float64(limit))
		kept += r - r/2
	}
	return bounds
}

func classStress(t *testing.T, l *Limiter, goroutines, calls int) {
	classes := l.cfg.Classes
	bounds := classBounds(classes, l.cfg.MaxLimit)
	var total atomic.Int64
	held := make([]atomic.Int64, len(classes))
	var failed atomic.Value
	fail := func(msg string) { failed.CompareAndSwap(nil, msg) }
	overloaded := errors.New("overloaded")
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 22))
			ctx := context.Background()
			for range calls {
				c := r.IntN(len(classes))
				var p Permit
				var err error
				if r.IntN(2) == 0 {
					p, err = l.AcquireClass(classes[c].Name)
				} else {
					p, err = l.AcquireContext(WithClass(ctx, classes[c].Name))
				}
				if err != nil {
					continue
				}
				if n := p.inFlight; n < 1 || n > int64(goroutines) {
					fail(fmt.Sprintf("a call counted %d in flight, with %d goroutines", n, goroutines))
				}
				if n := l.InFlight(); n > goroutines {
					fail(fmt.Sprintf("InFlight %d, with %d goroutines", n, goroutines))
				}
				// Counted after the slot is taken and before it is freed: never above the truth.
				if n := total.Add(1); n > int64(l.cfg.MaxLimit) {
					fail(fmt.Sprintf("%d calls hold a slot, limit %d", n, l.cfg.MaxLimit))
				}
				if n := held[c].Add(1); n > int64(bounds[c]) {
					fail(fmt.Sprintf("class %s holds %d slots, at most %d", classes[c].Name, n, bounds[c]))
				}
				runtime.Gosched()
				held[c].Add(-1)
				total.Add(-1)
				switch r.IntN(4) {
				case 0:
					p.Cancel()
				case 1:
					p.Done(overloaded)
				case 2:
					p.Finish(Drop)
				default:
					p.Done(nil)
				}
			}
		}()
	}
	wg.Wait()
	require.Nil(t, failed.Load())
	require.Zero(t, l.InFlight())
	require.Zero(t, l.Snapshot().Waiting)
	for _, c := range l.Snapshot().Classes {
		require.Zero(t, c.InFlight, c.Name)
	}
	requireClassesIdle(t, l)
}
