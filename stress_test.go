package adaptivelimit

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
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

// The stress suite: many goroutines on a limiter with a real clock and 1 ms windows, so that
// the limit moves while they run, each call ending at random: success, drop, another error,
// Cancel, a panic through Do, or a Done on another goroutine. It runs at GOMAXPROCS 1, 2 and
// 4, and on a limiter made at GOMAXPROCS 1 that then runs at 4. There are more goroutines
// than the highest limit, and calls hold their slots across yields and hand-offs, so that a
// limiter that let too many in would be seen to. It is bounded: stressOps operations and 20
// windows a variant, on the real clock.
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
		{"dryrun", Config{DryRun: true, InitialLimit: 4, MaxLimit: 16}},
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []struct{ atNew, run int }{{1, 1}, {2, 2}, {4, 4}, {1, 4}} {
		for _, v := range variants {
			t.Run(fmt.Sprintf("%s/procs=%d,%d", v.name, procs.atNew, procs.run), func(t *testing.T) {
				runtime.GOMAXPROCS(procs.atNew)
				v.c.Window, v.c.MinWindowSamples = time.Millisecond, 1
				l, err := New(v.c)
				require.NoError(t, err)
				runtime.GOMAXPROCS(procs.run)
				stress(t, l, max(16, 4*procs.run))
			})
		}
	}
}

// stressCounts are what the callers saw, to check the limiter's counts against.
type stressCounts struct {
	ops, acquired, rejected, samples, drops, checks atomic.Int64
}

func stress(t *testing.T, l *Limiter, goroutines int) {
	c := l.cfg
	bound := int64(c.MaxLimit) // a moving limit: never more holders than its highest
	if c.MinLimit == c.MaxLimit {
		bound = int64(c.MinLimit) // a fixed limit: exactly the limit
	}
	if c.DryRun {
		bound = 1 << 62 // admits every call
	}
	var n stressCounts
	var holders atomic.Int64
	hold := func() {
		if h := holders.Add(1); h > bound {
			t.Errorf("%d holders, limit at most %d", h, bound)
		}
		n.checks.Add(1)
	}
	var deadline time.Time
	if *soak > 0 {
		deadline = time.Now().Add(*soak)
	}

	// Another goroutine finishes the permits handed to it.
	handoff := make(chan *Permit, 1024)
	var finisher sync.WaitGroup
	finisher.Go(func() {
		for p := range handoff {
			holders.Add(-1)
			n.samples.Add(1)
			p.Done(nil)
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
				op := r.IntN(6)
				if op == 5 {
					stressPanicThroughDo(t, l, hold, &holders, &n)
					continue
				}
				p, err := l.Acquire()
				if err != nil {
					if !errors.Is(err, ErrLimitExceeded) {
						t.Errorf("Acquire returned %v", err)
					}
					n.rejected.Add(1)
					runtime.Gosched() // let the holders finish, as a client backs off
					continue
				}
				n.acquired.Add(1)
				hold()
				if r.IntN(16) == 0 {
					runtime.Gosched() // hold the slot a while
				}
				if op == 4 {
					handoff <- &p
					continue
				}
				holders.Add(-1)
				switch op {
				case 0:
					n.samples.Add(1)
					p.Done(nil)
				case 1:
					n.samples.Add(1)
					n.drops.Add(1)
					p.Done(timeout)
				case 2:
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
	require.GreaterOrEqual(t, s.Windows, uint64(20), "windows closed")
	read := l.stripes.sum(0)
	require.Equal(t, uint64(n.samples.Load()), read.samples, "every sample counted once, none invented")
	require.Equal(t, uint64(n.drops.Load()), read.drops)
	if c.DryRun {
		require.LessOrEqual(t, s.Rejected, uint64(n.acquired.Load()), "a would-be rejection is an admitted call")
	} else {
		require.LessOrEqual(t, s.Rejected, uint64(n.rejected.Load()), "rejections: lost perhaps, never invented")
	}
	if *soak > 0 {
		fmt.Printf("stress %s: %d operations, %d admitted, %d rejected, %d windows, %d limit changes, %d invariants checked\n",
			t.Name(), n.ops.Load(), n.acquired.Load(), n.rejected.Load(), s.Windows, s.LimitChanges, n.checks.Load())
	}
}

// stressOver reports whether a caller is done: after the deadline in a soak, else after its
// share of stressOps and twenty windows, so that the limit has moved.
func stressOver(l *Limiter, ops int, deadline time.Time) bool {
	if !deadline.IsZero() {
		return time.Now().After(deadline)
	}
	return ops >= stressOps && l.Snapshot().Windows >= 20
}

// stressPanicThroughDo runs a call through Do that panics inside the limit.
func stressPanicThroughDo(t *testing.T, l *Limiter, hold func(), holders *atomic.Int64, n *stressCounts) {
	admitted := false
	defer func() {
		if r := recover(); admitted && r != "stress" || !admitted && r != nil {
			t.Errorf("recovered %v, want the call's own panic", r)
		}
	}()
	_, err := Do(context.Background(), l, func(context.Context) (int, error) {
		admitted = true
		n.acquired.Add(1)
		hold()
		holders.Add(-1)
		panic("stress")
	})
	if !errors.Is(err, ErrLimitExceeded) {
		t.Errorf("Do returned %v", err)
	}
	n.rejected.Add(1)
}
