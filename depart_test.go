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

// Clients that leave, at once or after as long as a call takes or twice as long, lower no
// limit while the calls show no queue: the amplifier of issue 36, where every departure at a
// full limiter was a drop.
func TestDepartureWithoutQueueIsIgnored(t *testing.T) {
	for _, alg := range departAlgorithms {
		t.Run(alg.String(), func(t *testing.T) {
			l, clock := newManual(t, Config{Algorithm: alg, InitialLimit: 20, MinWindowSamples: 10})
			for range 30 {
				// a third of the calls leave: at once, after the latency, after twice the latency
				for _, at := range []time.Duration{0, 10 * time.Millisecond, 20 * time.Millisecond} {
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

// While the calls queue (their mean latency at least departQueued times the least seen), a
// departure that ran longer than that least is a drop, and the
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
			departWindow(t, l, clock, 30, 30*time.Millisecond, 3, 8*time.Millisecond) // early: ignored
			mid := l.Snapshot()
			assert.Equal(t, before.Drops, mid.Drops, "a departure before the latency without a queue")
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

// after is pure: unloaded falls at once and rises by 1/departRise of the gap; the dependency
// queues from a window at departQueued times unloaded, departures' time counted, until one
// under departCalm times it.
func TestDeparturesAfter(t *testing.T) {
	var d departures
	inf := math.Inf(1)
	rise := func(from, to float64) float64 { return from + (to-from)/departRise }
	u := rise(8, 9)
	for i, tc := range []struct {
		served, latency float64
		after, unloaded float64
	}{
		{0, 0, inf, 0},    // untimed
		{10, 10, inf, 10}, // the first timed window: nothing to compare with
		{12, 12, inf, rise(10, 12)},
		{8, 8, inf, 8},
		{8, 12, 8, 8},                 // queued: 1.25 times or more, with its departures' time
		{9, 9, u, u},                  // still queued: 1.1 times
		{8.5, 8.5, inf, rise(u, 8.5)}, // calm again
		{-1, -1, inf, rise(u, 8.5)},
	} {
		assert.Equal(t, tc.after, d.after(tc.served, tc.latency), fmt.Sprint("step ", i))
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
