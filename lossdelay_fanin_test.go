package adaptivelimit

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The rules of a wide fleet's client, below 1 (lossdelay.go, limits below 1), on the pure
// algorithm: each fails where its rule is taken out.
func TestLossDelaySparseWindows(t *testing.T) {
	paced := func(t *testing.T, limit float64) *lossDelay {
		a := newTestLossDelay(t, Config{InitialLimit: 1})
		a.limit = limit
		return a
	}

	// A paced window is judged by its drops: two of five cut the limit to 0.6^2 of it, not
	// by the share that got through (3/5), and one drop is loss.
	a := paced(t, 0.5)
	d := a.next(window{samples: 5, drops: 2, meanLatency: 10 * ms, maxInFlight: 1}, Decision{})
	require.Equal(t, CauseDrop, d.Cause)
	require.InDelta(t, 0.5*dropCut*dropCut, d.ExactLimit, 1e-12)
	a = paced(t, 0.5)
	require.Equal(t, CauseDrop, a.next(window{samples: 5, drops: 1, meanLatency: 10 * ms, maxInFlight: 1}, Decision{}).Cause)
	require.InDelta(t, 0.5*dropCut, a.limit, 1e-12)
	a = paced(t, 0.5)
	a.next(window{samples: 5, drops: 9, meanLatency: 10 * ms, maxInFlight: 1}, Decision{})
	require.InDelta(t, 0.5*deepestSubUnit, a.limit, 1e-12, "no deeper than deepestSubUnit")

	// At 1 or more, a window of fewer than minLossDrops*MinWindowSamples samples is one of
	// loss at its first drop; a larger one needs minLossDrops, and so does one that cannot go
	// below 1.
	for _, tt := range []struct {
		samples uint64
		floor   float64
		lost    bool
	}{{29, 0, true}, {30, 0, false}, {29, 1, false}} {
		a := newTestLossDelay(t, Config{InitialLimit: 4, SubUnitFloor: tt.floor})
		d := a.next(window{samples: tt.samples, drops: 1, meanLatency: 10 * ms, maxInFlight: 4}, Decision{})
		require.Equal(t, tt.lost, d.Cause == CauseDrop, "%d samples, floor %g", tt.samples, tt.floor)
	}

	// A paced window that lasted three windows grows three times as much, and one that lasted
	// an hour, pacedWindows times.
	grown := func(length time.Duration) float64 {
		a := paced(t, 0.2)
		a.next(window{samples: 10, meanLatency: 10 * ms, maxInFlight: 1, length: float64(length)}, Decision{})
		return a.limit - 0.2
	}
	one := grown(time.Second)
	require.Positive(t, one)
	require.InDelta(t, 3*one, grown(3*time.Second), 1e-12)
	require.InDelta(t, pacedWindows*one, grown(time.Hour), 1e-12)
	require.Equal(t, one, grown(time.Second/2), "a short window spans one")
	few := func(samples uint64) float64 {
		a := paced(t, 0.2)
		a.next(window{samples: samples, meanLatency: 10 * ms, maxInFlight: 1, length: float64(time.Hour)}, Decision{})
		return a.limit - 0.2
	}
	require.InDelta(t, 3*one, few(3), 1e-12, "a window closed with 3 samples spans 3 at most")
	require.InDelta(t, one, few(1), 1e-12)

	// Before its baseline is confirmed, a paced limiter grows at the baseline's latency; one at 1
	// or more waits for the probe that ends the window to confirm it.
	for _, limit := range []float64{0.5, 4} {
		a := unconfirmed(t, Config{})
		a.limit, a.baseline, a.phase = limit, 10*ms, learningLost
		a.next(window{samples: 10, meanLatency: 10 * ms, maxInFlight: max(1, int(limit))}, Decision{})
		require.Equal(t, draining, a.step, "a probe follows")
		require.Equal(t, limit < 1, a.afterProbe > limit, "limit %g: %g after", limit, a.afterProbe)
	}

	// Congested windows that do not bring the latency down relearn the baseline from 1 or
	// more; below 1 the queue is the fleet's, and the baseline holds.
	for _, limit := range []float64{16, 0.5} {
		a := paced(t, limit)
		for range 3 * a.relearnAfter {
			a.next(window{samples: 10, meanLatency: 40 * ms, maxInFlight: max(1, int(a.limit))}, Decision{})
		}
		require.Equal(t, limit >= 1, a.baseline > 10*ms, "limit %g: baseline %v", limit, time.Duration(a.baseline))
	}
}

// Before its first baseline, where the limit may go below 1, a window that has run a quarter
// of its length closes early at the third drop of a majority, with the few samples it has: a
// wide fleet's client sends a few calls a window. Before the quarter, and once a baseline is
// confirmed, it needs MinWindowSamples drops, as before.
func TestLossDelayStartClosesAtTheThirdDrop(t *testing.T) {
	for _, tt := range []struct {
		after  time.Duration
		closes bool
	}{{300 * time.Millisecond, true}, {200 * time.Millisecond, false}} {
		l, clock := newManual(t, Config{Algorithm: LossDelay, InitialLimit: 20, MinWindowSamples: 10})
		held := acquireN(t, l, 5)
		clock.Advance(tt.after)
		for p := range each(held[:3]) {
			p.Done(context.DeadlineExceeded)
		}
		held[3].Done(nil) // the drop that closed it ends its window: this call is the next one's
		d := l.Snapshot().Last
		require.Equal(t, tt.closes, d.Cause == CauseDrop, "after %v", tt.after)
		if tt.closes {
			require.Equal(t, 3, d.Samples)
			require.Equal(t, 3, d.Drops)
		}
		held[4].Done(nil)
	}

	least := func(a *lossDelay, id uint64) (got []uint64) {
		for range 20 {
			if n := a.dropped(id); n != 0 {
				got = append(got, n)
			}
		}
		return got
	}
	a := unconfirmed(t, Config{MinWindowSamples: 10})
	require.Equal(t, []uint64{3, 3, 10, 3, 10}, least(a, 1), "at 3, 6, 10, 12 and 20 drops")
	a.confirm()
	require.Equal(t, []uint64{10, 10}, least(a, 2), "once confirmed, at 10 and 20 only")
	require.Equal(t, []uint64{10, 10}, least(unconfirmed(t, Config{SubUnitFloor: 1, MinWindowSamples: 10}), 1), "never below 1")
}

// A paced window waits for MinWindowSamples samples pacedWindows windows at most, jittered
// between half of that and all of it; then it closes with one sample or more. At 1 or more,
// and without a sample, it waits as before.
func TestPacedWindowWaitsPacedWindowsAtMost(t *testing.T) {
	for _, r := range []float64{0, 0.5} {
		longest := time.Duration(float64(pacedWindows*time.Second) * (0.5 + r/2))
		l, clock := newManual(t, Config{Algorithm: LossDelay, InitialLimit: 20, MinWindowSamples: 10,
			Random: func() float64 { return r }})
		held := acquireN(t, l, 5)
		clock.Advance(300 * time.Millisecond)
		for p := range each(held[:4]) {
			p.Done(context.DeadlineExceeded) // the start's window closes at the third drop
		}
		held[4].Done(nil)
		s := l.Snapshot()
		require.Equal(t, uint64(1), s.Windows)
		require.Less(t, s.ExactLimit, 1.0, "paced")
		finish := func(at time.Duration) {
			t.Helper()
			clock.Set(int64(300*time.Millisecond + at))
			p, err := l.Acquire()
			require.NoError(t, err, "the turn has come")
			p.Done(nil)
		}
		finish(longest - time.Millisecond)
		require.Equal(t, uint64(1), l.Snapshot().Windows, "r %g: waits until its longest", r)
		finish(longest)
		s = l.Snapshot()
		require.Equal(t, uint64(2), s.Windows, "r %g: closes at its longest", r)
		require.Equal(t, 3, s.Last.Samples, "the call after the close and two paced calls: the fourth drop is left out")
	}

	a := newTestLossDelay(t, Config{InitialLimit: 1, Random: func() float64 { return 0.5 }})
	a.useClock(&source{nanosPerUnit: 1}, int64(time.Second))
	a.limit = 0.25
	a.nextEnd(0, int64(time.Second))
	at, window := int64(7500*time.Millisecond), int64(time.Second)
	for _, tt := range []struct {
		now     int64
		limit   float64
		samples uint64
		waits   bool
		end     int64 // where it waits
	}{
		{at - 1, 0.25, 1, true, at}, // until its longest, before the window's own end
		{at, 0.25, 1, false, 0},
		{at, 0.25, 0, true, at + window},
		{at, 1, 9, true, at + window},
	} {
		a.limit = tt.limit
		end, waits := a.shortEnd(tt.now, tt.now+window, tt.samples, 0)
		require.Equal(t, tt.waits, waits, "%+v", tt)
		if waits {
			require.Equal(t, tt.end, end, "%+v", tt)
		}
	}
}

// The start's window, closed early for loss with the limit taken below 1, judged the calls
// still in flight at its close: their drops are left out of the window after it, and counted
// as ignored. A drop of a call admitted after the close counts. Where the close left the
// limit at 1 or more, or the limit may not go below 1, every drop counts.
func TestTheStartsDropsAreLeftOut(t *testing.T) {
	for _, tt := range []struct {
		floor   float64
		held    int
		leftOut bool
	}{{0, 5, true}, {0, 10, false}, {1, 5, false}} {
		l, clock := newManual(t, Config{Algorithm: LossDelay, InitialLimit: 20, MinWindowSamples: 10, SubUnitFloor: tt.floor})
		held := acquireN(t, l, tt.held)
		clock.Advance(300 * time.Millisecond)
		last := held[tt.held-3:] // the most in flight: the window cuts from tt.held
		for p := range each(last) {
			p.Done(context.DeadlineExceeded)
		}
		require.Equal(t, tt.floor == 0, l.Snapshot().Windows == 1, "%+v: closed at the third drop", tt)
		held[0].Done(context.DeadlineExceeded) // admitted before the close
		require.Equal(t, tt.leftOut, l.Snapshot().Ignored == 1, "%+v", tt)
		for p := range each(held[1 : tt.held-3]) {
			p.Done(nil)
		}
		if !tt.leftOut {
			continue
		}
		p, err := l.Acquire()
		require.NoError(t, err, "paced, and the turn has come")
		p.Done(context.DeadlineExceeded)
		require.Equal(t, uint64(1), l.Snapshot().Ignored, "a drop of a call admitted after the close counts")
		clock.Advance(pacedWindows * time.Second)
		p, err = l.Acquire()
		require.NoError(t, err)
		p.Done(nil)
		d := l.Snapshot().Last
		require.Equal(t, 3, d.Samples, "the answer admitted before the close, the drop and the call: %+v", d)
		require.Equal(t, 1, d.Drops, "%+v", d)
		require.Equal(t, int64(math.MinInt64), l.leftOut.Load(), "for the window after the start's only")
	}

	// Only the start's window: one that closes early later, below 1 too, judges its own calls.
	lost := window{samples: 10, drops: 10, meanLatency: 10 * ms, maxInFlight: 1}
	for _, a := range []*lossDelay{unconfirmed(t, Config{InitialLimit: 1}), newTestLossDelay(t, Config{InitialLimit: 1})} {
		a.step = closedEarly
		a.next(lost, Decision{})
		require.Less(t, a.limit, 1.0)
		require.Equal(t, a.baseline == 0, a.judged(), "phase %d", a.phase)
	}
}

// Drops that race with the start's close, from several goroutines, are each counted once:
// as a drop, or as ignored where noteDrop found them left out, and every slot comes back.
func TestLeftOutDropsRacingTheClose(t *testing.T) {
	const calls = 7 // cut to 7/8 at most: the close takes the limit below 1 whatever the order
	var ignored uint64
	for range 200 {
		l, clock := newManual(t, Config{Algorithm: LossDelay, InitialLimit: 20, MinWindowSamples: 10})
		held := acquireN(t, l, calls)
		clock.Advance(300 * time.Millisecond)
		var wg sync.WaitGroup
		for p := range each(held) {
			wg.Go(func() { p.Done(context.DeadlineExceeded) })
		}
		wg.Wait()
		s := l.Snapshot()
		require.Zero(t, s.InFlight)
		require.Equal(t, uint64(calls), s.Drops+s.Ignored+s.Successes, "%+v", s)
		require.Zero(t, s.Successes)
		// A note that read the stripes before the other drops' samples were in may find too
		// few to close: the window then ends on time, and no drop is left out.
		require.LessOrEqual(t, s.Windows, uint64(1))
		if s.Windows == 0 {
			require.Zero(t, s.Ignored)
		}
		ignored += s.Ignored
	}
	require.Positive(t, ignored, "some drops came after the close")
}

// A drop doubles a paced limiter's gap, up to slowestGaps times the gap its window's close
// set; the next close sets it anew, and so does a window's end without the samples to close
// it. At 1 or more, a drop changes nothing.
func TestDropsSlowThePace(t *testing.T) {
	l, clock := newManual(t, Config{Algorithm: LossDelay, InitialLimit: 1, Window: time.Hour})
	paceAt(l, 0.25, 10*time.Millisecond) // a call every 40 ms
	gap := l.slots.gap.Load()
	require.Equal(t, l.src.units(40*time.Millisecond), gap)
	var got []int64
	for range 4 {
		l.slowPace()
		got = append(got, l.slots.gap.Load()/gap)
	}
	require.Equal(t, []int64{2, 4, slowestGaps, slowestGaps}, got)
	paceAt(l, 0.25, 10*time.Millisecond)
	require.Equal(t, gap, l.slots.gap.Load(), "the next window's pace")
	l.slowPace()
	clock.Advance(time.Hour) // the window's end, with no sample
	l.closeWindow(l.src.now())
	require.Zero(t, l.Snapshot().Windows, "the window waits for its samples")
	require.Equal(t, gap, l.slots.gap.Load(), "and the pace is its close's again")

	paceAt(l, 0.25, 10*time.Hour) // a gap of pacedWindows windows stays so
	most := l.slots.gap.Load()
	l.slowPace()
	require.Equal(t, most, l.slots.gap.Load())

	d := Decision{LimitAfter: int(l.setLimit(3)), ExactLimit: 3}
	l.setPace(&d, l.src.now())
	l.slowPace()
	require.Zero(t, l.slots.gap.Load())
}

// recorded is an algorithm that keeps the limit and records the windows it is given.
type recorded struct{ windows *[]window }

func (r recorded) next(w window, d Decision) Decision {
	*r.windows = append(*r.windows, w)
	d.LimitAfter = d.LimitBefore
	return d
}

func (recorded) longLatency() time.Duration { return 0 }

// A window's length is the time from the close before it, or from New, to its own close,
// extended windows included.
func TestWindowLength(t *testing.T) {
	l, clock := newManual(t, Config{Algorithm: AIMD, InitialLimit: 4, MinWindowSamples: 2})
	var got []window
	setAlgorithm(l, recorded{&got})
	finish := func(after time.Duration) {
		held := acquireN(t, l, 1)
		clock.Advance(after)
		held[0].Done(nil)
	}
	finish(500 * time.Millisecond) // the first sample
	finish(time.Second)            // the second, after the window's end: it closes at 1.5 s
	finish(time.Second)            // one sample at the end: the window waits
	finish(time.Second)            // closes at 3.5 s
	require.Len(t, got, 2)
	require.Equal(t, float64(1500*time.Millisecond), got[0].length)
	require.Equal(t, float64(2*time.Second), got[1].length)
}

// unconfirmed is LossDelay for c, without a baseline.
func unconfirmed(t *testing.T, c Config) *lossDelay {
	t.Helper()
	c.Algorithm = LossDelay
	c, err := c.resolved()
	require.NoError(t, err)
	return newLossDelay(c)
}

// After the start's window closed for its flood with the limit below 1, the window after it
// closes at its end with floodReadSamples samples and no drop, rather than wait for
// MinWindowSamples: the pace the start's close set is from a flooded latency, and a paced
// client waiting seconds for its samples holds the fleet below the capacity (-real -scenario
// fanin). A drop, or the baseline found, and it waits as before.
func TestPacedWindowAfterTheFloodClosesAtItsEnd(t *testing.T) {
	for _, drop := range []bool{false, true} {
		l, clock := newManual(t, Config{Algorithm: LossDelay, InitialLimit: 20, MinWindowSamples: 10,
			Random: func() float64 { return 1 }})
		held := acquireN(t, l, 4)
		clock.Advance(300 * time.Millisecond)
		for p := range each(held[:3]) {
			p.Done(context.DeadlineExceeded) // the start's window closes at the third drop
		}
		require.Less(t, l.Snapshot().ExactLimit, 1.0, "paced")
		held[3].Done(nil)
		var calls int
		for clock.Nanotime() < int64(3400*time.Millisecond) {
			clock.Advance(10 * time.Millisecond)
			if p, err := l.Acquire(); err == nil {
				if calls++; drop && calls == 1 {
					p.Done(context.DeadlineExceeded)
				} else {
					p.Done(nil)
				}
			}
		}
		require.GreaterOrEqual(t, calls, 2, "paced calls in the 3 s after the close: 3 samples with held[3]")
		s := l.Snapshot()
		if drop {
			require.Equal(t, uint64(1), s.Windows, "with a drop, it waits for its samples")
			continue
		}
		require.GreaterOrEqual(t, s.Windows, uint64(2), "closed at an end, not at its longest, 10.3 s")
	}
}
