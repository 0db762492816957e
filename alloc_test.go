package adaptivelimit

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The call path allocates nothing: admitting and finishing, a departure, a drop, rejecting,
// closing a window.
func TestNoAllocations(t *testing.T) {
	for _, clock := range []Clock{TickClock(), NanotimeClock(), TimeClock()} {
		forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
			l, err := New(Config{Algorithm: alg, Clock: clock, MaxLimit: 1000, InitialLimit: 1000})
			require.NoError(t, err)
			require.Zero(t, testing.AllocsPerRun(1000, func() {
				p, _ := l.Acquire()
				p.Done(nil)
			}), "admit + Done")
			require.Zero(t, testing.AllocsPerRun(1000, func() {
				p, _ := l.Acquire()
				p.Finish(Departed)
			}), "admit + Finish(Departed)")
			require.Zero(t, testing.AllocsPerRun(1000, func() {
				p, _ := l.Acquire()
				p.Done(context.DeadlineExceeded)
			}), "admit + a drop (noteDrop)")
			ctx, call := context.Background(), func(context.Context) (int, error) { return 1, nil }
			require.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = Do(ctx, l, call) }), "Do")

			full, err := New(Config{Algorithm: alg, Clock: clock, InitialLimit: 1, MaxLimit: 1})
			require.NoError(t, err)
			_, err = full.Acquire()
			require.NoError(t, err)
			require.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = full.Acquire() }), "reject")
		})
	}
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		l, clock := newManual(t, Config{Algorithm: alg, MinWindowSamples: 1, Window: time.Millisecond,
			OnLimitChange: func(string, Decision) {}})
		before := l.Snapshot().Windows
		require.Zero(t, testing.AllocsPerRun(1000, func() {
			p, _ := l.Acquire()
			clock.Advance(time.Millisecond)
			p.Done(nil)
		}), "a call that closes a window")
		require.Greater(t, l.Snapshot().Windows, before+1000, "every run closed a window")
		require.Zero(t, testing.AllocsPerRun(100, func() { _ = l.Snapshot() }), "snapshot")
	})
}
