package adaptivelimit

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var soak = flag.Duration("soak", 0, "run each stress variant for this long instead of a fixed count of operations, and report what it did (make soak)")

// stressOps is how many operations each stress variant runs in go test: with the race
// detector, a fraction of a second.
const stressOps = 20_000

// The stress suite, in every mode: many goroutines on a limiter with a real clock and 1 ms
// windows, so that the limit moves while they run, each call of a class drawn at random and
// ending at random: success, drop, another error, Cancel, a panic through Do, or a Done on
// another goroutine; with MaxWait, half the calls may wait. It runs at GOMAXPROCS 1 and 4 (the
// enforcing mode's limiter is made at 1, the leasing mode's at 2 or more). There are more
// goroutines than the highest limit, and calls hold their slots across yields and hand-offs,
// so that a limiter that let too many in, in all or in a class, would be seen to. It is
// bounded: stressOps operations and 20 windows a variant, on the real clock.
func TestStress(t *testing.T) {
	variants := []struct {
		name string
		c    Config
	}{
		{"fixed", Config{InitialLimit: 8, MinLimit: 8, MaxLimit: 8}},
		{"gradient2", Config{Algorithm: Gradient2, InitialLimit: 8, MaxLimit: 12, QueueSize: 2}},
		{"aimd", Config{Algorithm: AIMD, InitialLimit: 8, MaxLimit: 12}},
		{"vegas", Config{Algorithm: Vegas, InitialLimit: 8, MaxLimit: 12}},
		{"lossdelay", Config{Algorithm: LossDelay, InitialLimit: 8, MaxLimit: 12}},
		{"waiting", Config{InitialLimit: 8, MinLimit: 8, MaxLimit: 8, MaxWait: time.Millisecond}},
	}
	forEachMode(t, testModes, func(t *testing.T, m testMode) {
		for _, procs := range []int{1, 4} {
			for _, v := range variants {
				t.Run(fmt.Sprintf("%s/procs=%d", v.name, procs), func(t *testing.T) {
					v.c.Window, v.c.MinWindowSamples = time.Millisecond, 1
					l := m.new(t, v.c)
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
					stress(t, m, l, max(16, 4*procs))
				})
			}
		}
	})
}

// stressCounts are what the callers saw, to check the limiter's counts against.
type stressCounts struct {
	ops, acquired, rejected, samples, drops, ignored, checks atomic.Int64
}

// handed is a permit handed to another goroutine to finish, and the index of its class.
type handed struct {
	p     *Permit
	class int
}

func stress(t *testing.T, m testMode, l *Limiter, goroutines int) {
	goroutinesBefore := runtime.NumGoroutine()
	c := configOf(l)
	handoff := make(chan handed, 1024)
	bound := int64(c.MaxLimit) // a moving limit: never more holders than its highest
	if c.MinLimit == c.MaxLimit {
		bound = int64(c.MinLimit) // a fixed limit: exactly the limit
	}
	truth := bound // the most calls in flight a permit may have been counted among
	if !m.enforced() {
		bound = 1 << 62 // admits every call
		truth = int64(goroutines + cap(handoff) + 1)
	}
	classes := max(len(m.classes), 1)
	classBound := slices.Repeat([]int64{bound}, classes)
	if m.classes != nil && m.enforced() {
		classBound = classBounds(m.classes, c.MaxLimit)
	}
	var n stressCounts
	var holders atomic.Int64
	held := make([]atomic.Int64, classes)
	hold := func(class int) {
		if h := holders.Add(1); h > bound {
			t.Errorf("%d holders, limit at most %d", h, bound)
		}
		if h := held[class].Add(1); h > classBound[class] {
			t.Errorf("class %d: %d holders, at most %d", class, h, classBound[class])
		}
		n.checks.Add(1)
	}
	unhold := func(class int) {
		held[class].Add(-1)
		holders.Add(-1) // before the slot is freed, which lets another in
	}
	var deadline time.Time
	if *soak > 0 {
		deadline = time.Now().Add(*soak)
	}

	// Another goroutine finishes the permits handed to it.
	var finisher sync.WaitGroup
	finisher.Go(func() {
		for h := range handoff {
			unhold(h.class)
			n.samples.Add(1)
			h.p.Done(nil)
		}
	})

	stop := make(chan struct{})
	var watcher sync.WaitGroup
	watcher.Go(func() { watch(t, l, stop, &n.checks) })

	timeout := fmt.Errorf("call: %w", context.DeadlineExceeded)
	other := errors.New("404")
	var callers sync.WaitGroup
	for g := range goroutines {
		callers.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 11))
			for i := 0; ; i++ {
				if i%256 == 0 && stressOver(l, i*goroutines, deadline) {
					return
				}
				n.ops.Add(1)
				class := r.IntN(classes)
				name := ""
				if m.classes != nil {
					name = m.classes[class].Name
				}
				op := r.IntN(6)
				if op == 5 {
					stressPanicThroughDo(t, l, m.context(context.Background(), name), func() { hold(class) }, func() { unhold(class) }, &n)
					continue
				}
				var p Permit
				var err error
				if c.MaxWait > 0 && r.IntN(2) == 0 {
					p, err = l.AcquireContext(m.context(context.Background(), name))
				} else {
					p, err = m.acquire(l, name)
				}
				if err != nil {
					if !errors.Is(err, ErrLimitExceeded) {
						t.Errorf("Acquire returned %v", err)
					}
					n.rejected.Add(1)
					runtime.Gosched() // let the holders finish, as a client backs off
					continue
				}
				if k := heldBy(&p); k < 1 || k > truth {
					t.Errorf("a call counted among %d in flight, at most %d may be", k, truth)
				}
				n.acquired.Add(1)
				hold(class)
				if r.IntN(16) == 0 {
					runtime.Gosched() // hold the slot a while
				}
				if op == 4 {
					handoff <- handed{&p, class}
					continue
				}
				unhold(class)
				switch op {
				case 0:
					n.samples.Add(1)
					p.Done(nil)
				case 1:
					n.samples.Add(1)
					n.drops.Add(1)
					p.Done(timeout)
				case 2:
					n.ignored.Add(1)
					p.Done(other)
				case 3:
					p.Cancel()
				}
			}
		})
	}
	callers.Wait()
	close(handoff)
	finisher.Wait()
	close(stop)
	watcher.Wait()

	s := l.Snapshot()
	require.Zero(t, s.InFlight, "every slot came back")
	require.Zero(t, s.Waiting)
	requireIdle(t, l)
	require.GreaterOrEqual(t, s.Windows, uint64(20), "windows closed")
	// LossDelay leaves out the drops of calls that started before a flooded window was judged
	// (noteDrop): each is counted as ignored instead of as a sample.
	leftOut := int64(s.Ignored) - n.ignored.Load()
	require.GreaterOrEqual(t, leftOut, int64(0), "ignored: never fewer than the calls that ended with another error")
	if l.schedule == nil {
		require.Zero(t, leftOut, "only LossDelay leaves a drop out")
	}
	samples, drops := windowTotals(l)
	require.Equal(t, uint64(n.samples.Load()-leftOut), samples, "every sample counted once, none invented")
	require.Equal(t, uint64(n.drops.Load()-leftOut), drops)
	if m.enforced() {
		require.LessOrEqual(t, s.Rejected, uint64(n.rejected.Load()), "rejections: lost perhaps, never invented")
	} else {
		require.LessOrEqual(t, s.Rejected, uint64(n.acquired.Load()), "a would-be rejection is an admitted call")
	}
	requireNoGoroutineLeft(t, goroutinesBefore)
	if *soak > 0 {
		fmt.Printf("stress %s: %d operations, %d admitted, %d rejected, %d windows, %d limit changes, %d invariants checked\n",
			t.Name(), n.ops.Load(), n.acquired.Load(), n.rejected.Load(), s.Windows, s.LimitChanges, n.checks.Load())
	}
}

// classBounds returns, for a limit, the most calls each class may hold: the limit less the
// never-lent parts, half rounded up, of the reserves above it.
func classBounds(classes []Class, limit int) []int64 {
	bounds, kept := make([]int64, len(classes)), 0
	for i, c := range classes {
		bounds[i] = int64(limit - kept)
		r := int(c.Reserve * float64(limit))
		kept += r - r/2
	}
	return bounds
}

// stressOver reports whether a caller is done: after the deadline in a soak, else after its
// share of stressOps and twenty windows, so that the limit has moved.
func stressOver(l *Limiter, ops int, deadline time.Time) bool {
	if !deadline.IsZero() {
		return time.Now().After(deadline)
	}
	return ops >= repeat(stressOps) && l.Snapshot().Windows >= 20
}

// stressPanicThroughDo runs a call with ctx through Do that panics inside the limit.
func stressPanicThroughDo(t *testing.T, l *Limiter, ctx context.Context, hold, unhold func(), n *stressCounts) {
	admitted := false
	defer func() {
		if r := recover(); admitted && r != "stress" || !admitted && r != nil {
			t.Errorf("recovered %v, want the call's own panic", r)
		}
	}()
	_, err := Do(ctx, l, func(context.Context) (int, error) {
		admitted = true
		n.acquired.Add(1)
		hold()
		unhold()
		panic("stress")
	})
	if !errors.Is(err, ErrLimitExceeded) {
		t.Errorf("Do returned %v", err)
	}
	n.rejected.Add(1)
}
