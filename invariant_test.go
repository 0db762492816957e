package adaptivelimit

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Random sequences of calls, outcomes and clock moves, with random valid configurations:
// whatever happens, the limit stays in its bounds, no more calls hold a slot than the limit
// allowed when they took it, and every slot comes back.
func TestRandomOperations(t *testing.T) {
	errs := []error{nil, nil, nil, context.DeadlineExceeded, context.Canceled, errors.New("404")}
	for seed := range uint64(30) {
		r := rand.New(rand.NewPCG(seed, 99))
		minLimit := 1 + r.IntN(10)
		c := Config{
			Algorithm:        algorithms[r.IntN(len(algorithms))],
			MinLimit:         minLimit,
			MaxLimit:         minLimit + r.IntN(100),
			MinWindowSamples: 1 + r.IntN(20),
			Window:           time.Duration(1+r.IntN(1000)) * time.Millisecond,
			Smoothing:        0.01 + 0.99*r.Float64(),
			RTTTolerance:     1 + 3*r.Float64(),
			LongWindow:       1 + r.IntN(1000),
			QueueSize:        1 + r.IntN(10),
			BackoffRatio:     0.5 + 0.49*r.Float64(),
			LossThreshold:    0.001 + 0.5*r.Float64(),
			DelayTolerance:   1 + r.Float64(),
			IncreaseRatio:    0.01 + 0.99*r.Float64(),
			ProbeInterval:    r.IntN(20),
			RelearnAfter:     1 + r.IntN(10),
			LatencyCeiling:   time.Duration(r.IntN(3)) * 300 * time.Millisecond,
			ProbeMultiplier:  1 + r.IntN(40),
			Random:           rand.New(rand.NewPCG(seed, 100)).Float64,
			DryRun:           seed%10 == 9,
		}
		if seed%3 == 0 {
			c.Alpha = 1 + r.IntN(5)
			c.Beta = c.Alpha + 1 + r.IntN(10)
		}
		l, clock := newManual(t, c)
		var held []Permit
		for step := range 10_000 {
			switch op := r.IntN(10); {
			case op < 5:
				limit := l.Limit()
				p, err := l.Acquire()
				if err != nil {
					if !errors.Is(err, ErrLimitExceeded) || len(held) < limit {
						t.Fatalf("seed %d step %d: %v with %d of %d slots held", seed, step, err, len(held), limit)
					}
					continue
				}
				held = append(held, p)
				if !c.DryRun && len(held) > limit {
					t.Fatalf("seed %d step %d: %d admitted, limit %d", seed, step, len(held), limit)
				}
			case op < 9 && len(held) > 0:
				i := r.IntN(len(held))
				p := held[i]
				held[i] = held[len(held)-1]
				held = held[:len(held)-1]
				if op == 8 {
					p.Cancel()
				} else {
					p.Done(errs[r.IntN(len(errs))])
				}
			default:
				clock.Advance(time.Duration(r.Int64N(int64(c.Window))))
			}
			if s := l.Snapshot(); s.Limit < c.MinLimit || s.Limit > c.MaxLimit || s.InFlight != len(held) {
				t.Fatalf("seed %d step %d: limit %d outside [%d, %d], or %d in flight with %d held",
					seed, step, s.Limit, c.MinLimit, c.MaxLimit, s.InFlight, len(held))
			}
		}
		for _, p := range held {
			p.Done(nil)
		}
		require.Zero(t, l.InFlight(), "seed %d: every slot came back", seed)
		require.Positive(t, l.Snapshot().Windows, "seed %d: windows closed", seed)
	}
}

// Many goroutines on a fixed limit: never more calls inside than the limit.
func TestNoOverAdmission(t *testing.T) {
	const limit, goroutines, calls = 5, 16, 3000
	l, err := New(Config{InitialLimit: limit, MinLimit: limit, MaxLimit: limit, MinWindowSamples: 1, Window: time.Millisecond})
	require.NoError(t, err)
	var inside, most atomic.Int64
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range calls {
				p, err := l.Acquire()
				if err != nil {
					continue
				}
				admitted.Add(1)
				n := inside.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				inside.Add(-1)
				p.Done(nil)
			}
		})
	}
	wg.Wait()
	require.LessOrEqual(t, most.Load(), int64(limit))
	require.Positive(t, admitted.Load())
	require.Zero(t, l.InFlight())
	// Rejections are counted with plain increments on counters that goroutines may share:
	// a count can be lost to a race, never invented.
	rejected := uint64(goroutines*calls) - uint64(admitted.Load())
	require.LessOrEqual(t, l.Snapshot().Rejected, rejected, "never invented")
	require.GreaterOrEqual(t, l.Snapshot().Rejected, rejected*95/100, "few lost")
}

// Concurrent calls that close windows under the real clock, with snapshots read beside them:
// windows close one at a time, the limit stays in bounds, and every slot comes back.
func TestConcurrentWindows(t *testing.T) {
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		l, err := New(Config{Algorithm: alg, MaxLimit: 64, MinWindowSamples: 1, Window: time.Millisecond})
		require.NoError(t, err)
		var wg sync.WaitGroup
		stop := make(chan struct{})
		wg.Go(func() {
			poll(stop, func() bool {
				s := l.Snapshot()
				require.GreaterOrEqual(t, s.Limit, 1)
				require.LessOrEqual(t, s.Limit, 64)
				require.GreaterOrEqual(t, s.InFlight, 0)
				return true
			})
		})
		var workers sync.WaitGroup
		for g := range 8 {
			workers.Go(func() {
				for i := range 5000 {
					p, err := l.Acquire()
					if err != nil {
						continue
					}
					if (g+i)%13 == 0 {
						p.Done(context.DeadlineExceeded)
					} else {
						p.Done(nil)
					}
				}
			})
		}
		workers.Wait()
		close(stop)
		wg.Wait()
		require.Zero(t, l.InFlight())
	})
}
