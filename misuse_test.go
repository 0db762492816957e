package adaptivelimit

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// newGrowing returns a limiter on a ManualClock whose every window with all its slots in use
// moves the limit, so that OnLimitChange runs: after windows that warm the algorithm up
// (Vegas learns its no-load latency, LossDelay probes), until three in a row moved it.
// onChange is called from the next window on.
func newGrowing(t *testing.T, alg Algorithm, onChange func(string, Decision)) (*Limiter, *ManualClock) {
	t.Helper()
	var armed atomic.Bool
	l, clock := newManual(t, Config{Algorithm: alg, InitialLimit: 2, QueueSize: 10, MinWindowSamples: 1,
		OnLimitChange: func(name string, d Decision) {
			if armed.Load() {
				onChange(name, d)
			}
		}})
	for moved := 0; moved < 3; {
		before := l.Snapshot().LimitChanges
		closeOne(t, l, clock)
		if moved++; l.Snapshot().LimitChanges == before {
			moved = 0
		}
		require.Less(t, l.Snapshot().Windows, uint64(50), "the limit does not grow")
	}
	armed.Store(true)
	return l, clock
}

// closeOne fills the limit, ends the window and finishes the calls, the last first: its Done
// closes the window, which saw every slot in use.
func closeOne(t *testing.T, l *Limiter, clock *ManualClock) {
	t.Helper()
	held := acquireN(t, l, l.Limit())
	clock.Advance(time.Second)
	for i := len(held) - 1; i >= 0; i-- {
		held[i].Done(nil)
	}
}

// An OnLimitChange that panics: the panic reaches the caller of the Done that closed the
// window, whose slot is already free; the window is recorded, and later windows close.
func TestOnLimitChangePanics(t *testing.T) {
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		l, clock := newGrowing(t, alg, func(string, Decision) { panic("listener") })
		base := l.Snapshot().Windows
		limit := l.Limit()
		held := acquireN(t, l, limit)
		clock.Advance(time.Second)
		last := &held[len(held)-1] // saw every slot in use
		require.PanicsWithValue(t, "listener", func() { last.Done(nil) })
		require.True(t, *last == Permit{}, "finished")
		for i := range held[:len(held)-1] {
			held[i].Done(nil)
		}
		require.Zero(t, l.InFlight())
		s := l.Snapshot()
		require.Equal(t, base+1, s.Windows)
		require.Equal(t, s.Last.LimitAfter, s.Limit, "the new limit is in force")
		require.Greater(t, s.Limit, limit)

		require.Panics(t, func() { closeOne(t, l, clock) })
		require.Equal(t, base+2, l.Snapshot().Windows, "the next window closed")
	})
}

// An OnLimitChange that calls back into the limiter: Acquire, Done and Snapshot work inside
// it. Its own Done cannot close a window, since one is closing, so its sample goes to the
// next window.
func TestOnLimitChangeReenters(t *testing.T) {
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		var l *Limiter
		var inside []Snapshot
		var clock *ManualClock
		l, clock = newGrowing(t, alg, func(_ string, d Decision) {
			if len(inside) > 0 {
				return
			}
			p, err := l.Acquire()
			require.NoError(t, err)
			clock.Advance(time.Second) // over again, but this window is closing
			p.Done(nil)
			inside = append(inside, l.Snapshot())
		})
		base := l.Snapshot().Windows
		held := acquireN(t, l, l.Limit())
		n := len(held)
		clock.Advance(time.Second)
		held[n-1].Done(nil) // closes the second window
		require.Len(t, inside, 1)
		require.Equal(t, base+1, inside[0].Windows, "the snapshot inside sees the window")
		require.Equal(t, base+1, l.Snapshot().Windows, "the Done inside closed none")

		held[n-2].Done(nil) // the window is over: this closes it
		s := l.Snapshot()
		require.Equal(t, base+2, s.Windows)
		require.Equal(t, 2, s.Last.Samples, "the sample added inside the listener, and this one")
		for i := range held[:n-2] {
			held[i].Done(nil)
		}
		require.Zero(t, l.InFlight())
	})
}

// An OnLimitChange that blocks delays the next window but blocks no call, and loses no
// sample: what completes meanwhile is counted when the listener returns and a window closes.
func TestOnLimitChangeBlocks(t *testing.T) {
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		entered, release := make(chan struct{}), make(chan struct{})
		first := true
		l, clock := newGrowing(t, alg, func(string, Decision) {
			if first {
				first = false
				close(entered)
				<-release
			}
		})
		base := l.Snapshot().Windows
		held := acquireN(t, l, l.Limit())
		n := len(held)
		clock.Advance(time.Second)
		var closer sync.WaitGroup
		closer.Go(func() { held[n-1].Done(nil) }) // closes the window, blocks in the listener
		<-entered
		limit := l.Limit()

		// Meanwhile, many windows' worth of calls complete without waiting.
		const calls = 50
		for range calls {
			p, err := l.Acquire()
			require.NoError(t, err)
			clock.Advance(time.Second)
			p.Done(nil)
		}
		for i := range held[:n-1] {
			held[i].Done(nil)
		}
		require.Equal(t, base+1, l.Snapshot().Windows, "no window closes while the listener runs")
		require.Equal(t, limit, l.Limit())

		close(release)
		closer.Wait()
		acquireN(t, l, 1)[0].Done(nil)
		s := l.Snapshot()
		require.Equal(t, base+2, s.Windows)
		require.Equal(t, calls+n, s.Last.Samples, "nothing lost while it blocked")
		require.Zero(t, s.InFlight)
	})
}
