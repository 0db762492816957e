package adaptivelimit

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// paceAt sets l's limit below 1, as a window's close does: exact at the latency given.
func paceAt(l *Limiter, exact float64, latency time.Duration) {
	d := Decision{LimitAfter: int(l.setLimit(1)), ExactLimit: exact, MeanLatency: latency}
	l.setPace(&d, l.src.now())
	l.exact = d.ExactLimit
}

// At a limit of 1/4 and a latency of 10 ms, one call every 40 ms, and never two at once: the
// turn of a call that finds the slot held passes to the next call after the slot is free.
func TestPacedAdmission(t *testing.T) {
	l, clock := newManual(t, Config{Algorithm: LossDelay, InitialLimit: 1, Window: time.Hour})
	paceAt(l, 0.25, 10*time.Millisecond)
	var at []int
	for ms := range 400 { // a call every millisecond, finished at once
		if p, err := l.Acquire(); err == nil {
			at = append(at, ms)
			require.Equal(t, 1, l.InFlight())
			p.Done(nil)
		}
		clock.Advance(time.Millisecond)
	}
	require.Equal(t, []int{0, 40, 80, 120, 160, 200, 240, 280, 320, 360}, at)
	require.Equal(t, uint64(390), l.Snapshot().Rejected)
	require.Equal(t, 1, l.Limit(), "at most one call at once")

	// A call holds the slot past its turns: none is admitted beside it, and the next call
	// after it finishes has the turn it missed, and no more.
	p, err := l.Acquire() // at 400
	require.NoError(t, err)
	for range 100 {
		clock.Advance(time.Millisecond)
		_, err := l.Acquire()
		require.ErrorIs(t, err, ErrLimitExceeded)
	}
	p.Done(nil) // at 500
	for range 2 {
		p, err = l.Acquire()
		require.NoError(t, err, "the turn missed at 440, and the one at 480: the schedule runs at most one turn behind")
		p.Done(nil)
	}
	_, err = l.Acquire()
	require.ErrorIs(t, err, ErrLimitExceeded, "not one for each turn missed")
	clock.Advance(40 * time.Millisecond)
	p, err = l.Acquire()
	require.NoError(t, err)
	p.Done(nil)

	// A limit of 1 or more ends the pace: calls are admitted up to the limit, at once.
	d := Decision{LimitAfter: int(l.setLimit(3)), ExactLimit: 3}
	l.setPace(&d, l.src.now())
	held := acquireN(t, l, 3)
	_, err = l.Acquire()
	require.ErrorIs(t, err, ErrLimitExceeded)
	for i := range held {
		held[i].Done(nil)
	}
}

// A rejection reads no clock while the limit is 1 or more; a paced one does.
func TestRejectionReadsNoClockAtOneOrMore(t *testing.T) {
	clock := &countingClock{}
	l, err := New(Config{Algorithm: LossDelay, InitialLimit: 1, Window: time.Hour, Clock: clock})
	require.NoError(t, err)
	p, err := l.Acquire()
	require.NoError(t, err)
	before := clock.reads.Load()
	for range 10 {
		_, err := l.Acquire()
		require.ErrorIs(t, err, ErrLimitExceeded)
	}
	require.Equal(t, before, clock.reads.Load())
	paceAt(l, 0.5, time.Millisecond)
	_, err = l.Acquire()
	require.ErrorIs(t, err, ErrLimitExceeded, "the slot is held")
	require.Greater(t, clock.reads.Load(), before)
	p.Done(nil)
}

// LossDelay goes below 1 through windows of loss, and reports it: Limit 1, the share in
// Snapshot.ExactLimit, in Decision.ExactLimit and to OnLimitChange, though LimitAfter stays 1.
func TestLossDelayReportsALimitBelowOne(t *testing.T) {
	var changes []Decision
	l, clock := newManual(t, Config{Algorithm: LossDelay, InitialLimit: 1, MinWindowSamples: 3,
		Window: 100 * time.Millisecond, OnLimitChange: func(_ string, d Decision) { changes = append(changes, d) }})
	for i := 0; l.Snapshot().ExactLimit >= 1; i++ {
		require.Less(t, i, 100, "the limit went below 1")
		if p, err := l.Acquire(); err == nil {
			clock.Advance(50 * time.Millisecond)
			p.Done(context.DeadlineExceeded)
		}
	}
	s := l.Snapshot()
	require.Equal(t, 1, s.Limit)
	require.Equal(t, 1, l.Limit())
	require.Less(t, s.ExactLimit, 1.0)
	require.Equal(t, s.ExactLimit, s.Last.ExactLimit)
	require.Equal(t, 1, s.Last.LimitAfter)
	require.Equal(t, CauseDrop, s.Last.Cause)
	require.NotEmpty(t, changes)
	require.Equal(t, s.Last, changes[len(changes)-1], "OnLimitChange saw the limit fall below 1")
	_, _, down := s.Decisions(CauseDrop)
	require.Positive(t, down)
}

// The pure algorithm below 1: the deepest cuts, the floors, the way back.
func TestLossDelayBelowOne(t *testing.T) {
	loss := window{samples: 20, drops: 20, meanLatency: 50 * ms, maxInFlight: 1}

	// A fleet's client, started in loss without a baseline: cut by the share that got through,
	// at most to an eighth, from what ran, down to SubUnitFloor.
	c, err := Config{Algorithm: LossDelay, InitialLimit: 20}.resolved()
	require.NoError(t, err)
	require.Equal(t, 1.0/1024, c.SubUnitFloor)
	a := newLossDelay(c)
	var got []float64
	for range 5 {
		d := a.next(window{samples: 20, drops: 20, meanLatency: 50 * ms, maxInFlight: 2}, Decision{})
		require.Equal(t, CauseDrop, d.Cause)
		require.Equal(t, 1, d.LimitAfter)
		require.Equal(t, a.limit, d.ExactLimit)
		got = append(got, d.ExactLimit)
	}
	require.Equal(t, []float64{0.25, 1.0 / 32, 1.0 / 256, 1.0 / 1024, 1.0 / 1024}, got)

	// A client alone, whose dependency is down: from 1, half, then an eighth a window, but
	// no lower than 1/64 of the limit before the streak; back to it at once after.
	a = newTestLossDelay(t, Config{InitialLimit: 1})
	got = got[:0]
	for range 4 {
		got = append(got, a.next(loss, Decision{}).ExactLimit)
	}
	require.Equal(t, []float64{0.5, 1.0 / 16, 1.0 / 64, 1.0 / 64}, got)
	d := a.next(window{samples: 3, meanLatency: 10 * ms, maxInFlight: 1}, Decision{})
	require.Equal(t, CauseGrowth, d.Cause)
	require.Equal(t, 1.0, d.ExactLimit)

	// Growth below 1 is in proportion to the limit; a probe halves it.
	require.InDelta(t, pace(1.08, 1)/4, pace(1.08, 0.25), 1e-15)
	require.Equal(t, 0.125, half(1.0/1024, 0.25))
	require.Equal(t, 1.0/1024, half(1.0/1024, 1.0/1024))
	require.Equal(t, 1.0, half(1.0/1024, 1.5), "from 1 or more, as before")

	// SubUnitFloor 1: never below 1, as before.
	a = newTestLossDelay(t, Config{InitialLimit: 1, SubUnitFloor: 1})
	for range 4 {
		require.Equal(t, 1.0, a.next(loss, Decision{}).ExactLimit)
	}
}

// The knob: on for LossDelay by default, off for the others, which ignore it; refused out of
// range, and below 1 where LossDelay cannot pace.
func TestSubUnitFloorConfig(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want float64
	}{
		{Config{Algorithm: LossDelay}, 1.0 / 1024},
		{Config{Algorithm: LossDelay, SubUnitFloor: 0.01}, 0.01},
		{Config{Algorithm: LossDelay, SubUnitFloor: 1}, 1},
		{Config{Algorithm: LossDelay, MinLimit: 2}, 1},
		{Config{Algorithm: LossDelay, MaxWait: time.Second}, 1},
		{Config{Algorithm: LossDelay, Classes: []Class{{Name: "a"}}}, 1},
		{Config{Algorithm: Gradient2}, 1},
		{Config{Algorithm: AIMD, SubUnitFloor: 1}, 1},
		{Config{Algorithm: Vegas}, 1},
		{Config{Algorithm: Gradient2, SubUnitFloor: 0.5}, 0.5}, // ignored, as LossDelay's other tuning
		{Config{Algorithm: Vegas, SubUnitFloor: 0.5, MinLimit: 2}, 0.5},
	} {
		c, err := tc.c.resolved()
		require.NoError(t, err)
		require.Equal(t, tc.want, c.SubUnitFloor, "%+v", tc.c)
	}
	for _, c := range []Config{
		{Algorithm: Gradient2, SubUnitFloor: 2},
		{Algorithm: LossDelay, SubUnitFloor: 2},
		{Algorithm: LossDelay, SubUnitFloor: -1},
		{Algorithm: LossDelay, SubUnitFloor: 1e-6},
		{Algorithm: LossDelay, SubUnitFloor: math.Inf(1)},
		{Algorithm: LossDelay, SubUnitFloor: 0.5, MinLimit: 2},
		{Algorithm: LossDelay, SubUnitFloor: 0.5, MaxWait: time.Second},
		{Algorithm: LossDelay, SubUnitFloor: 0.5, Classes: []Class{{Name: "a"}}},
	} {
		_, err := New(c)
		ce := requireConfigError(t, err, "R4C-REG-001", "subUnitFloor", c.SubUnitFloor)
		require.NotEmpty(t, ce.Rule)
	}
	_, err := New(Config{Algorithm: LossDelay, SubUnitFloor: math.NaN()})
	require.ErrorIs(t, err, ErrInvalidTuning)
}

// The paced path allocates nothing: a paced admission and its Done, and a paced rejection.
func TestPacedNoAllocations(t *testing.T) {
	l, clock := newManual(t, Config{Algorithm: LossDelay, InitialLimit: 1, Window: time.Hour})
	paceAt(l, 0.5, time.Millisecond)
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		clock.Advance(2 * time.Millisecond)
		p, err := l.Acquire()
		if err != nil {
			panic(err)
		}
		p.Done(nil)
	}), "paced admission + Done")
	clock.Advance(2 * time.Millisecond)
	p, err := l.Acquire()
	require.NoError(t, err)
	require.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = l.Acquire() }), "paced rejection")
	p.Done(nil)
}

// Goroutines racing for paced turns on the system's clock, each call held past the next turn:
// never two calls at once, and every slot comes back.
func TestPacedOneAtATime(t *testing.T) {
	l, err := New(Config{Algorithm: LossDelay, InitialLimit: 1, Window: time.Hour, Clock: NanotimeClock()})
	require.NoError(t, err)
	paceAt(l, 0.5, time.Microsecond) // a turn every 2 µs
	var running, most, admitted atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 5000 {
				p, err := l.Acquire()
				if err != nil {
					continue
				}
				n := running.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				admitted.Add(1)
				for start := time.Now(); time.Since(start) < 5*time.Microsecond; {
				}
				running.Add(-1)
				p.Done(nil)
			}
		})
	}
	wg.Wait()
	require.Equal(t, int64(1), most.Load(), "never two paced calls at once")
	require.Positive(t, admitted.Load())
	require.Zero(t, l.InFlight())
	require.Zero(t, l.slots.taken.Load(), "no slot lost")
}

// A clock that steps back past the turn to come finds it come, and the turns start again from
// there, rather than wait for the clock to catch up.
func TestPacedClockSteppedBack(t *testing.T) {
	l, clock := newStep(t, Config{Algorithm: LossDelay, InitialLimit: 1, Window: time.Hour}, int64(10*time.Hour))
	paceAt(l, 0.5, 10*time.Millisecond) // a turn every 20 ms
	p, err := l.Acquire()
	require.NoError(t, err)
	p.Done(nil)
	clock.now.Add(-int64(time.Hour))
	p, err = l.Acquire()
	require.NoError(t, err, "the turn ahead is past a step back")
	p.Done(nil)
	_, err = l.Acquire()
	require.ErrorIs(t, err, ErrLimitExceeded, "the next turn is 20 ms after the step back")
	clock.now.Add(int64(20 * time.Millisecond))
	p, err = l.Acquire()
	require.NoError(t, err)
	p.Done(nil)
}
