package adaptivelimit

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// growing returns a config whose every window with all slots in use moves the limit, so
// that OnLimitChange runs.
func growing(alg Algorithm, onChange func(string, Decision)) Config {
	return Config{Algorithm: alg, InitialLimit: 2, QueueSize: 10, MinWindowSamples: 1, OnLimitChange: onChange}
}

// closeOne fills the limit, ends the window and finishes the calls: the first Done closes it.
func closeOne(t *testing.T, l *Limiter, clock *ManualClock) {
	t.Helper()
	held := acquireN(t, l, l.Limit())
	clock.Advance(time.Second)
	for i := range held {
		held[i].Done(nil)
	}
}

// An OnLimitChange that panics: the panic reaches the caller of the Done that closed the
// window, whose slot is already free; the window is recorded, and later windows close.
func TestOnLimitChangePanics(t *testing.T) {
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		l, clock := newManual(t, growing(alg, func(string, Decision) { panic("listener") }))
		held := acquireN(t, l, 2)
		clock.Advance(time.Second)
		require.PanicsWithValue(t, "listener", func() { held[0].Done(nil) })
		require.Equal(t, Permit{}, held[0], "finished")
		held[1].Done(nil)
		require.Zero(t, l.InFlight())
		s := l.Snapshot()
		require.Equal(t, uint64(1), s.Windows)
		require.Equal(t, s.Last.LimitAfter, s.Limit, "the new limit is in force")
		require.Greater(t, s.Limit, 2)

		require.Panics(t, func() { closeOne(t, l, clock) })
		require.Equal(t, uint64(2), l.Snapshot().Windows, "the next window closed")
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
		l, clock = newManual(t, growing(alg, func(_ string, d Decision) {
			if len(inside) > 0 {
				return
			}
			p, err := l.Acquire()
			require.NoError(t, err)
			clock.Advance(time.Second) // over again, but this window is closing
			p.Done(nil)
			inside = append(inside, l.Snapshot())
		}))
		held := acquireN(t, l, 2)
		clock.Advance(time.Second)
		held[0].Done(nil) // closes the first window
		require.Len(t, inside, 1)
		require.Equal(t, uint64(1), inside[0].Windows, "the snapshot inside sees the window")
		require.Equal(t, uint64(1), l.Snapshot().Windows, "the Done inside closed none")

		held[1].Done(nil) // the window is over: this closes it
		s := l.Snapshot()
		require.Equal(t, uint64(2), s.Windows)
		require.Equal(t, 2, s.Last.Samples, "the sample added inside the listener, and this one")
		require.Zero(t, s.InFlight)
	})
}

// An OnLimitChange that blocks delays the next window but blocks no call, and loses no
// sample: what completes meanwhile is counted when the listener returns and a window closes.
func TestOnLimitChangeBlocks(t *testing.T) {
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		entered, release := make(chan struct{}), make(chan struct{})
		first := true
		l, clock := newManual(t, growing(alg, func(string, Decision) {
			if first {
				first = false
				close(entered)
				<-release
			}
		}))
		held := acquireN(t, l, 2)
		clock.Advance(time.Second)
		var closer sync.WaitGroup
		closer.Go(func() { held[0].Done(nil) }) // closes the window, blocks in the listener
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
		held[1].Done(nil)
		require.Equal(t, uint64(1), l.Snapshot().Windows, "no window closes while the listener runs")
		require.Equal(t, limit, l.Limit())

		close(release)
		closer.Wait()
		acquireN(t, l, 1)[0].Done(nil)
		s := l.Snapshot()
		require.Equal(t, uint64(2), s.Windows)
		require.Equal(t, calls+2, s.Last.Samples, "nothing lost while it blocked")
		require.Zero(t, s.InFlight)
	})
}
