package adaptivelimit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// departWindow runs one window of n calls on l: each call runs for latency, and every
// departEvery-th (0: none) departs after departAt instead of finishing with a sample.
func departWindow(t *testing.T, l *Limiter, clock *ManualClock, n int, latency time.Duration, departEvery int, departAt time.Duration) {
	t.Helper()
	for i := 1; i <= n; i++ {
		p, err := l.Acquire()
		require.NoError(t, err)
		if departEvery > 0 && i%departEvery == 0 {
			clock.Advance(departAt)
			p.Finish(Departed)
			continue
		}
		clock.Advance(latency)
		p.Finish(Sample)
	}
	clock.Advance(l.cfg.Window) // the next call's finish closes the window
}

var departAlgorithms = []Algorithm{AIMD, LossDelay, Vegas, Gradient2}

// Clients that leave, even after long waits, lower no limit while the calls served show no
// queue: the amplifier of issue 36, where every departure at a full limiter was a drop.
func TestDepartureWithoutQueueIsIgnored(t *testing.T) {
	for _, alg := range departAlgorithms {
		t.Run(alg.String(), func(t *testing.T) {
			l, clock := newManual(t, Config{Algorithm: alg, InitialLimit: 20, MinWindowSamples: 10})
			for range 30 {
				// a third of the calls leave: at once, at twice the latency, at ten times it
				for _, at := range []time.Duration{0, 20 * time.Millisecond, 100 * time.Millisecond} {
					departWindow(t, l, clock, 30, 10*time.Millisecond, 3, at)
				}
			}
			s := l.Snapshot()
			assert.Zero(t, s.Drops, "no departure is a drop")
			assert.GreaterOrEqual(t, s.Limit, 20, "the limit did not fall")
			assert.Positive(t, s.Ignored)
		})
	}
}

// While the calls served queue (their mean latency at least departTolerance times the least
// seen), a departure that ran longer than departTolerance times that least is a drop, and the
// algorithms that read drops back off; one that left sooner is still ignored.
func TestDepartureFromAQueueIsADrop(t *testing.T) {
	for _, alg := range []Algorithm{AIMD, LossDelay, Vegas} {
		t.Run(alg.String(), func(t *testing.T) {
			l, clock := newManual(t, Config{Algorithm: alg, InitialLimit: 20, MinWindowSamples: 10})
			for range 5 {
				departWindow(t, l, clock, 30, 10*time.Millisecond, 0, 0) // AIMD's first departure times calls from here
			}
			if alg == AIMD {
				departWindow(t, l, clock, 30, 10*time.Millisecond, 3, 0)
				departWindow(t, l, clock, 30, 10*time.Millisecond, 0, 0)
				departWindow(t, l, clock, 30, 10*time.Millisecond, 0, 0)
			}
			departWindow(t, l, clock, 30, 30*time.Millisecond, 0, 0) // queued: 3x the unloaded latency
			before := l.Snapshot()
			departWindow(t, l, clock, 30, 30*time.Millisecond, 3, 14*time.Millisecond) // early: ignored
			mid := l.Snapshot()
			assert.Equal(t, before.Drops, mid.Drops, "a departure before 1.5 times the unloaded latency")
			departWindow(t, l, clock, 30, 30*time.Millisecond, 3, 60*time.Millisecond)
			after := l.Snapshot()
			assert.Equal(t, before.Drops+10, after.Drops, "every late departure is a drop")
			if alg != LossDelay { // LossDelay acts on a loss rate; it read none this window
				assert.Less(t, after.Limit, mid.Limit, "the algorithm backed off")
			}
		})
	}
}

// AIMD does not time its calls until a departure asks how long one ran: that departure is
// ignored, and so are those of the window in which timing began.
func TestDepartureTimesAIMD(t *testing.T) {
	l, clock := newManual(t, Config{Algorithm: AIMD, InitialLimit: 20, MinWindowSamples: 10})
	departWindow(t, l, clock, 30, 10*time.Millisecond, 0, 0)
	assert.Zero(t, l.Snapshot().WindowLatency, "AIMD's calls are not timed")
	assert.False(t, l.timed())
	departWindow(t, l, clock, 30, 10*time.Millisecond, 3, time.Second)
	assert.True(t, l.timed())
	assert.Zero(t, l.Snapshot().Drops)
	departWindow(t, l, clock, 30, 10*time.Millisecond, 0, 0) // mixed: timing began in it
	assert.Zero(t, l.departAfter.Load())
	departWindow(t, l, clock, 30, 10*time.Millisecond, 0, 0)
	assert.Equal(t, 10*time.Millisecond, l.Snapshot().WindowLatency)
	p, err := l.Acquire()
	require.NoError(t, err)
	clock.Advance(time.Second)
	p.Finish(Departed)
	assert.Zero(t, l.Snapshot().Drops, "no window queued")
}

// after is pure: the unloaded latency falls at once, rises by 1/departRise of the gap, and
// only a window at departTolerance times it lets late departures drop.
func TestDeparturesAfter(t *testing.T) {
	var d departures
	inf := math.Inf(1)
	for i, tc := range []struct {
		mean            float64
		drops           bool
		after, unloaded float64
	}{
		{0, false, inf, 0},   // untimed
		{10, false, inf, 10}, // the first timed window: nothing to compare with
		{14, false, inf, 10 + 4.0/departRise},
		{8, false, inf, 8},
		{12, false, departTolerance * (8 + 4.0/departRise), 8 + 4.0/departRise}, // 1.5x: queued
		{13, true, departTolerance * (8 + 4.0/departRise), 8 + 4.0/departRise},  // with drops: no rise
		{7, true, inf, 7}, // but a fall
		{-1, false, inf, 7},
	} {
		assert.Equal(t, tc.after, d.after(tc.mean, tc.drops), fmt.Sprint("step ", i))
		assert.InDelta(t, tc.unloaded, d.unloaded, 1e-9, fmt.Sprint("step ", i))
	}
}

// Hedged requests: each call is sent again after the 90th percentile of the latency, and the
// copy that has not answered when the other does is cancelled. The cancelled copies, a tenth
// of the calls, each ran longer than most, and lower no limit.
func TestDepartureOfHedgedCopies(t *testing.T) {
	for _, alg := range departAlgorithms {
		t.Run(alg.String(), func(t *testing.T) {
			l, clock := newManual(t, Config{Algorithm: alg, InitialLimit: 20, MinWindowSamples: 10})
			r := rand.New(rand.NewPCG(1, 2))
			service := func() time.Duration { // lognormal, median 10 ms, sigma 0.5
				return time.Duration(float64(10*time.Millisecond) * math.Exp(0.5*r.NormFloat64()))
			}
			hedgeAfter := time.Duration(float64(10*time.Millisecond) * math.Exp(0.5*1.2816))
			for range 3000 {
				first, err := l.Acquire()
				require.NoError(t, err)
				a := service()
				if a <= hedgeAfter {
					clock.Advance(a)
					first.Finish(Sample)
					continue
				}
				clock.Advance(hedgeAfter)
				second, err := l.Acquire()
				require.NoError(t, err)
				b := service()
				if a-hedgeAfter <= b {
					clock.Advance(a - hedgeAfter)
					first.Finish(Sample)
					second.Finish(Departed)
				} else {
					clock.Advance(b)
					second.Finish(Sample)
					first.Finish(Departed)
				}
			}
			s := l.Snapshot()
			assert.Zero(t, s.Drops, "no cancelled copy is a drop")
			assert.Positive(t, s.Ignored)
			assert.GreaterOrEqual(t, s.Limit, 20, "the limit did not fall")
		})
	}
}
