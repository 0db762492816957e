package adaptivelimit

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The spec's "Testing it with ManualClock", translated.
func TestSpecManualClockExample(t *testing.T) {
	limit, clock := newManual(t, Config{Name: "orders-async", InitialLimit: 2, MinWindowSamples: 1})
	a, err := limit.Acquire() // pending: holds a slot
	require.NoError(t, err)
	b, err := limit.Acquire() // pending: holds the other
	require.NoError(t, err)
	_, err = limit.Acquire() // full: rejected at once
	require.ErrorIs(t, err, ErrLimitExceeded)

	clock.Advance(time.Second) // the calls took 1 s; the window is over
	a.Done(nil)                // ends the window
	b.Done(nil)
	require.Equal(t, uint64(1), limit.Snapshot().Windows)
	require.Equal(t, time.Second, limit.Snapshot().WindowLatency)
}

func TestRejection(t *testing.T) {
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		clock := &countingClock{}
		l, err := New(Config{Name: "search", Algorithm: alg, InitialLimit: 3, Clock: clock})
		require.NoError(t, err)
		held := acquireN(t, l, 3)
		reads := clock.reads.Load()

		_, err1 := l.Acquire()
		_, err2 := l.Acquire()
		require.ErrorIs(t, err1, ErrLimitExceeded)
		require.Same(t, err1, err2, "one preallocated error per limiter")
		var rejected *LimitExceededError
		require.ErrorAs(t, err1, &rejected)
		require.Equal(t, "search", rejected.InstanceID())
		require.Contains(t, err1.Error(), `"search"`)
		require.Equal(t, reads, clock.reads.Load(), "a rejection reads no clock")
		require.Equal(t, uint64(2), l.Snapshot().Rejected)
		require.Equal(t, 3, l.InFlight())

		held[0].Done(nil)
		p, err := l.Acquire()
		require.NoError(t, err, "a freed slot admits the next call")
		p.Cancel()
	})
}

func TestOutcomes(t *testing.T) {
	timeout := fmt.Errorf("calling backend: %w", context.DeadlineExceeded)
	notFound := errors.New("404 not found")
	cases := []struct {
		name           string
		finish         func(*Permit)
		samples, drops int
	}{
		{"success is a sample", func(p *Permit) { p.Done(nil) }, 1, 0},
		{"a DropOn error is a drop sample", func(p *Permit) { p.Done(timeout) }, 1, 1},
		{"another error frees the slot only", func(p *Permit) { p.Done(notFound) }, 0, 0},
		{"context.Canceled frees the slot only", func(p *Permit) { p.Done(context.Canceled) }, 0, 0},
		{"Cancel frees the slot only", func(p *Permit) { p.Cancel() }, 0, 0},
	}
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				l, clock := newManual(t, Config{Algorithm: alg, MinWindowSamples: 1})
				p, err := l.Acquire()
				require.NoError(t, err)
				tc.finish(&p)
				require.Zero(t, l.InFlight(), "the slot is free")
				// One more sample after the window's end closes it, so the window shows
				// what the first call added.
				clock.Advance(time.Second)
				p, err = l.Acquire()
				require.NoError(t, err)
				p.Done(nil)
				last := l.Snapshot().Last
				require.Equal(t, tc.samples+1, last.Samples)
				require.Equal(t, tc.drops, last.Drops)
			})
		}
	})
}

func TestWindowNeedsDurationAndSamples(t *testing.T) {
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		l, clock := newManual(t, Config{Algorithm: alg, MinWindowSamples: 3, Window: time.Second})
		complete := func(n int) {
			// One at a time: whatever the first window does to the limit (LossDelay lowers
			// it to probe), a slot is free.
			for range n {
				acquireN(t, l, 1)[0].Done(nil)
			}
		}
		complete(5)
		require.Zero(t, l.Snapshot().Windows, "not over: enough samples, too early")

		clock.Advance(999 * time.Millisecond)
		complete(1)
		require.Zero(t, l.Snapshot().Windows, "one nanosecond short")

		clock.Advance(time.Millisecond)
		complete(1)
		require.Equal(t, uint64(1), l.Snapshot().Windows, "over, with 7 samples")
		require.Equal(t, 7, l.Snapshot().Last.Samples)

		// The next window ends at 2 s. At 2.5 s it has 2 samples: it is extended to 3 s
		// and keeps them.
		clock.Advance(1500 * time.Millisecond)
		complete(2)
		require.Equal(t, uint64(1), l.Snapshot().Windows, "over, too few samples: extended")
		clock.Advance(400 * time.Millisecond) // 2.9 s
		complete(1)
		require.Equal(t, uint64(1), l.Snapshot().Windows, "the extended window ends at 3 s")
		clock.Advance(100 * time.Millisecond) // 3 s
		complete(1)
		require.Equal(t, uint64(2), l.Snapshot().Windows)
		require.Equal(t, 4, l.Snapshot().Last.Samples, "the extended window kept its samples")
	})
}

func TestIdleWindowIsExtendedPastNow(t *testing.T) {
	clock := &countingClock{}
	l, err := New(Config{MinWindowSamples: 2, Clock: clock})
	require.NoError(t, err)
	clock.Advance(time.Hour + 300*time.Millisecond)
	acquireN(t, l, 1)[0].Done(nil)
	// One call an hour later: the window is over with one sample, and is extended to the
	// first window end after now (1 h 1 s), not by one second at a time.
	clock.Advance(699 * time.Millisecond)
	acquireN(t, l, 1)[0].Done(nil)
	require.Zero(t, l.Snapshot().Windows)
	clock.Advance(time.Millisecond)
	acquireN(t, l, 1)[0].Done(nil)
	require.Equal(t, uint64(1), l.Snapshot().Windows)
	require.Equal(t, 3, l.Snapshot().Last.Samples)
}

func TestNoTrafficNoChange(t *testing.T) {
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		l, clock := newManual(t, Config{Algorithm: alg, MinWindowSamples: 1})
		for range 100 {
			clock.Advance(time.Second)
		}
		s := l.Snapshot()
		require.Equal(t, defaultInitialLimit, s.Limit)
		require.Zero(t, s.Windows)
	})
}

func TestLowerLimitInterruptsNothing(t *testing.T) {
	// AIMD backs off to 18 after a window with a drop, below the 20 calls in flight.
	l, clock := newManual(t, Config{Algorithm: AIMD, MinWindowSamples: 1})
	held := acquireN(t, l, 20)
	clock.Advance(time.Second)
	held[0].Done(context.DeadlineExceeded)
	require.Equal(t, 18, l.Limit())
	require.Equal(t, 19, l.InFlight(), "the calls already running go on")

	_, err := l.Acquire()
	require.ErrorIs(t, err, ErrLimitExceeded, "19 in flight, limit 18")
	held[1].Done(nil)
	_, err = l.Acquire()
	require.ErrorIs(t, err, ErrLimitExceeded, "18 in flight, limit 18")
	held[2].Done(nil)
	p, err := l.Acquire()
	require.NoError(t, err, "17 in flight")
	p.Cancel()
}

func TestDisabled(t *testing.T) {
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		clock := &countingClock{}
		l, err := New(Config{Algorithm: alg, InitialLimit: 1, MaxLimit: 1, MinWindowSamples: 1, Disabled: true, Clock: clock})
		require.NoError(t, err)
		reads := clock.reads.Load()
		held := acquireN(t, l, 100)
		clock.Advance(time.Minute)
		for p := range each(held) {
			p.Done(context.DeadlineExceeded)
		}
		s := l.Snapshot()
		require.True(t, s.Disabled)
		require.Zero(t, s.InFlight)
		require.Zero(t, s.Windows)
		require.Zero(t, s.Rejected)
		require.Equal(t, 1, s.Limit)
		require.Equal(t, reads, clock.reads.Load(), "nothing is measured")
	})
}

func TestDryRun(t *testing.T) {
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		l, clock := newManual(t, Config{Algorithm: alg, InitialLimit: 2, MinWindowSamples: 1, DryRun: true})
		held := acquireN(t, l, 5)
		require.Equal(t, 5, l.InFlight(), "every call is admitted")
		require.Equal(t, uint64(3), l.Snapshot().Rejected, "three would have been rejected")
		require.True(t, l.Snapshot().DryRun)

		clock.Advance(999 * time.Millisecond)
		for p := range each(held) {
			p.Done(nil)
		}
		clock.Advance(time.Millisecond)
		acquireN(t, l, 1)[0].Done(nil) // ends the window
		s := l.Snapshot()
		require.Equal(t, uint64(1), s.Windows, "the limit is still computed")
		require.Equal(t, 6, s.Last.Samples)
		require.Equal(t, 5, s.Last.MaxInFlight)
		require.Zero(t, s.InFlight)
	})
}

// Done and Cancel clear the permit, so a second finish of the same variable does nothing.
// The case: with a limit of 2, b finished twice freed a's slot too, so that three
// calls ran under a limit of 2 and the correct finish of d panicked.
func TestFinishingTwiceIsANoOp(t *testing.T) {
	finishes := map[string]func(p *Permit){
		"Done":   func(p *Permit) { p.Done(nil) },
		"Cancel": func(p *Permit) { p.Cancel() },
		"drop":   func(p *Permit) { p.Done(context.DeadlineExceeded) },
	}
	for first, finish := range finishes {
		for second, again := range finishes {
			t.Run(first+" then "+second, func(t *testing.T) {
				l, _ := newManual(t, Config{InitialLimit: 2, MaxLimit: 2})
				held := acquireN(t, l, 2)
				finish(&held[1])
				require.True(t, held[1] == Permit{}, "cleared")
				require.NotPanics(t, func() { again(&held[1]) })
				require.Equal(t, 1, l.InFlight(), "a still holds its slot")
				c, err := l.Acquire()
				require.NoError(t, err)
				_, err = l.Acquire()
				require.ErrorIs(t, err, ErrLimitExceeded, "a and c hold the two slots")
				c.Done(nil)
				held[0].Done(nil)
				require.Zero(t, l.InFlight())
			})
		}
	}
}

// A finished copy is a different variable: finishing it again is the bug the godoc warns of.
// With nothing else held it is caught, without a sample.
func TestFinishingACopyTwicePanics(t *testing.T) {
	l, _ := newManual(t, Config{})
	p, err := l.Acquire()
	require.NoError(t, err)
	q := copyOf(&p)
	p.Done(nil)
	require.PanicsWithValue(t, "adaptivelimit: permit finished twice: more slots released than were taken", func() { q.Done(nil) })
	require.Zero(t, l.InFlight(), "the count is left as it was")
	require.Equal(t, uint64(1), l.stripes.sum(0).samples, "the second finish adds no sample")
	p, err = l.Acquire()
	require.NoError(t, err)
	p.Cancel()
}

// The zero Permit, which Acquire returns with an error, needs no finishing: finishing it
// anyway must not panic.
func TestZeroPermit(t *testing.T) {
	var p Permit
	require.NotPanics(t, func() { p.Done(nil) })
	require.NotPanics(t, func() { p.Done(context.DeadlineExceeded) })
	require.NotPanics(t, p.Cancel)
}

func TestListenerOnlyOnChange(t *testing.T) {
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		var changes []Decision
		l, clock := newManual(t, Config{
			Name: "orders", Algorithm: alg, InitialLimit: 10, MinWindowSamples: 1,
			OnLimitChange: func(name string, d Decision) {
				require.Equal(t, "orders", name)
				changes = append(changes, d)
			},
		})
		window := func(inFlight int) {
			held := acquireN(t, l, inFlight)
			clock.Advance(time.Second)
			for p := range each(held) {
				p.Done(nil)
			}
		}
		// The listener hears of exactly the windows that moved the limit.
		moved, kept := 0, 0
		check := func() {
			if last := l.Snapshot().Last; last.LimitAfter != last.LimitBefore {
				moved++
			} else {
				kept++
			}
			require.Len(t, changes, moved)
		}
		// Few slots in use: Gradient2 is app-limited, AIMD does not grow, Vegas learns its
		// no-load latency, LossDelay takes its first window's latency as its baseline (the
		// window did not fill its limit) and holds.
		for range 4 {
			window(1)
			check()
		}
		require.Positive(t, kept, "some window kept the limit")
		for range 5 {
			window(l.Limit()) // every slot in use, latency as before: each grows
			check()
		}
		require.NotEmpty(t, changes)
		s := l.Snapshot()
		require.Equal(t, uint64(len(changes)), s.LimitChanges)
		last := changes[len(changes)-1]
		require.Equal(t, s.Last, last)
		require.Equal(t, s.Limit, last.LimitAfter)
		require.Less(t, last.LimitBefore, last.LimitAfter)
	})
}

func TestAsyncLatencyRunsToFinish(t *testing.T) {
	l, clock := newManual(t, Config{MinWindowSamples: 2})
	p, err := l.Acquire()
	require.NoError(t, err)
	clock.Advance(300 * time.Millisecond)
	q, err := l.Acquire()
	require.NoError(t, err)
	clock.Advance(600 * time.Millisecond)
	finish := func(p *Permit) {
		done := make(chan struct{})
		go func() { p.Done(nil); close(done) }()
		<-done
	}
	finish(&p) // at 900 ms: the window is not over
	clock.Advance(100 * time.Millisecond)
	finish(&q) // at 1 s: ends the window
	require.Equal(t, 800*time.Millisecond, l.Snapshot().WindowLatency, "mean of 900 ms and 700 ms")
}

func TestSnapshot(t *testing.T) {
	l, clock := newManual(t, Config{Name: "inventory", InitialLimit: 10, MinLimit: 2, MaxLimit: 50, Window: 20 * time.Millisecond, MinWindowSamples: 1})
	held := acquireN(t, l, 10)
	clock.Advance(20 * time.Millisecond)
	for p := range each(held) {
		p.Done(nil)
	}
	s := l.Snapshot()
	require.Equal(t, Snapshot{
		Name: "inventory", Algorithm: Gradient2, Limit: 10, ExactLimit: 10, MinLimit: 2, MaxLimit: 50,
		Windows: 1, WindowLatency: 20 * time.Millisecond, LongLatency: 20 * time.Millisecond,
		decisions: decisions(CauseAppLimited, limitKept),
		Last: Decision{
			Samples: 1, MeanLatency: 20 * time.Millisecond, MaxInFlight: 1,
			LongLatency: 20 * time.Millisecond, Cause: CauseAppLimited, LimitBefore: 10, LimitAfter: 10,
			ExactLimit: 10,
		},
		Successes: 10,
	}, s, "the first sample closes the window; it saw 1 in flight, fewer than half of 10")
	require.Equal(t, "inventory", l.Snapshot().Name)
}

func TestSystemClocks(t *testing.T) {
	for name, clock := range map[string]Clock{"ticks": TickClock(), "nanotime": NanotimeClock(), "time": TimeClock()} {
		t.Run(name, func(t *testing.T) {
			forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
				l, err := New(Config{Algorithm: alg, Clock: clock, Window: time.Millisecond, MinWindowSamples: 1})
				require.NoError(t, err)
				// Calls until a window closes: a window needs 1 ms and a call after it, however
				// long the scheduler keeps this goroutine away. The 10 s cap only ends a broken run.
				start := clock.Nanotime()
				for l.Snapshot().Windows == 0 && clock.Nanotime()-start < int64(10*time.Second) {
					p, err := l.Acquire()
					require.NoError(t, err)
					p.Done(nil)
				}
				s := l.Snapshot()
				require.NotZero(t, s.Windows, "windows close on the real clock")
				require.Zero(t, s.InFlight)
				if alg == AIMD {
					require.Zero(t, s.Last.MeanLatency, "AIMD does not time calls")
				} else {
					require.Positive(t, s.Last.MeanLatency, "calls are timed")
				}
			})
		})
	}
}
