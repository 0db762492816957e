package adaptivelimit

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// newTestLossDelay returns LossDelay with the defaults but for c, its startup probe done: a
// baseline of 10 ms and the limit back at c's InitialLimit (default 20), no longer doubling.
func newTestLossDelay(t *testing.T, c Config) *lossDelay {
	t.Helper()
	c.Algorithm = LossDelay
	c, err := c.resolved()
	require.NoError(t, err)
	a := newLossDelay(c)
	a.baseline = 10 * ms
	return a
}

// full is a window in which limit calls ran at once with mean latency ms milliseconds.
func full(limit int, latency float64, drops uint64) window {
	return window{samples: 1000, drops: drops, meanLatency: latency * ms, maxInFlight: limit}
}

func TestLossDelayStartsWithAProbe(t *testing.T) {
	c, err := Config{Algorithm: LossDelay, InitialLimit: 40}.resolved()
	require.NoError(t, err)
	a := newLossDelay(c)
	// The first window at 40 ran at five times the no-load latency: no baseline to judge by.
	d := a.next(full(40, 50, 0), Decision{})
	require.Equal(t, ReasonProbe, d.Reason)
	require.Equal(t, 1, d.LimitAfter, "the probe runs at MinLimit")
	require.Zero(t, d.LongLatency)
	// The probe's first window lets the calls admitted before it finish: its latency is
	// theirs, and is not learnt.
	d = a.next(full(1, 40, 0), Decision{})
	require.Equal(t, ReasonProbe, d.Reason)
	require.Equal(t, 1, d.LimitAfter)
	require.Zero(t, d.LongLatency)
	// Its second measures: 10 ms. The limit goes back to 40 cut by the first window's
	// gradient, 1.08*10/50: 8.64.
	d = a.next(full(1, 10, 0), Decision{})
	require.Equal(t, ReasonProbe, d.Reason)
	require.Equal(t, 10*time.Millisecond, d.LongLatency)
	require.Equal(t, 8, d.LimitAfter)
	// Then it doubles while latency stays within tolerance, as a slow start.
	d = a.next(full(8, 10, 0), Decision{})
	require.Equal(t, ReasonGrowth, d.Reason)
	require.Equal(t, 17, d.LimitAfter)
	// Until a window is congested: then it shrinks by the gradient and grows by steps.
	d = a.next(full(17, 12, 0), Decision{})
	require.Equal(t, ReasonGradient, d.Reason)
	require.InDelta(t, 1.08*10/12, d.Gradient, 1e-12)
	require.Equal(t, 15, d.LimitAfter) // 17.28 * 0.9
	d = a.next(full(15, 10, 0), Decision{})
	require.Equal(t, ReasonGrowth, d.Reason)
	require.Equal(t, 18, d.LimitAfter, "15.552 up by IncreaseRatio 0.2 of it")
}

func TestLossDelayLossBacksOffAndTeachesNothing(t *testing.T) {
	for _, tc := range []struct {
		name        string
		w           window
		want        int
		wantReason  Reason
		wantRegains bool
	}{
		// 2% of the calls dropped: above the 1% threshold. From min(limit 50, 40 in flight),
		// times BackoffRatio 0.9.
		{"share above threshold", window{samples: 1000, drops: 20, meanLatency: 10 * ms, maxInFlight: 40}, 36, ReasonLoss, true},
		// 0.5% dropped: a healthy dependency's tail. Latency within tolerance: growth.
		{"share below threshold", window{samples: 1000, drops: 5, meanLatency: 10 * ms, maxInFlight: 50}, 60, ReasonGrowth, false},
		// 2 of 100: above the share, but two timeouts in a hundred calls say little.
		{"too few drops", window{samples: 100, drops: 2, meanLatency: 10 * ms, maxInFlight: 50}, 60, ReasonGrowth, false},
		// 80% dropped: cut by what got through, at most by half.
		{"heavy loss", window{samples: 1000, drops: 800, meanLatency: 10 * ms, maxInFlight: 50}, 25, ReasonLoss, true},
		// Drops and latency 1.5 times the tolerance: the gradient, 1.08*10/18 = 0.6, cuts more.
		{"loss and latency", window{samples: 1000, drops: 20, meanLatency: 18 * ms, maxInFlight: 50}, 30, ReasonLoss, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newTestLossDelay(t, Config{InitialLimit: 50})
			d := a.next(tc.w, Decision{})
			require.Equal(t, tc.wantReason, d.Reason)
			require.Equal(t, tc.want, d.LimitAfter)
			require.Equal(t, 10*time.Millisecond, d.LongLatency, "the baseline learns nothing")
			require.Equal(t, tc.wantRegains, a.regain == 50)
		})
	}
}

func TestLossDelayRegainsTheLimitAfterLoss(t *testing.T) {
	a := newTestLossDelay(t, Config{InitialLimit: 40})
	// An incident: every call times out, at the timeout's latency, for a long while. The
	// limit goes to MinLimit and the baseline stays.
	for range 30 {
		d := a.next(window{samples: 20, drops: 20, meanLatency: 50 * ms, maxInFlight: a.limitInt()}, Decision{})
		require.Equal(t, ReasonLoss, d.Reason)
		require.Equal(t, 10*time.Millisecond, d.LongLatency)
	}
	require.Equal(t, 1, a.limitInt())
	// Once it is over, the limit doubles back to the 40 it had before, then grows by steps.
	var got []int
	for range 8 {
		got = append(got, a.next(full(a.limitInt(), 10, 0), Decision{}).LimitAfter)
	}
	require.Equal(t, []int{2, 4, 8, 16, 32, 40, 48, 57}, got)
}

func TestLossDelayCeiling(t *testing.T) {
	w := full(50, 40, 0) // 40 ms: congested too, but the ceiling is checked first
	a := newTestLossDelay(t, Config{InitialLimit: 50})
	d := a.next(w, Decision{})
	require.Equal(t, ReasonGradient, d.Reason, "no ceiling by default")
	require.Equal(t, 25, d.LimitAfter)

	a = newTestLossDelay(t, Config{InitialLimit: 50, LatencyCeiling: 30 * time.Millisecond})
	d = a.next(w, Decision{})
	require.Equal(t, ReasonCeiling, d.Reason)
	require.Equal(t, 25, d.LimitAfter, "min(BackoffRatio, gradient 0.27 clamped to 0.5)")
	d = a.next(full(25, 10.5, 0), Decision{})
	require.Equal(t, ReasonGrowth, d.Reason, "under the ceiling and within tolerance")
}

func TestLossDelayGradientShrinksWithoutGrowth(t *testing.T) {
	a := newTestLossDelay(t, Config{InitialLimit: 100})
	// 1.1 times the baseline: within the tolerance of 1.08? No: above it, by a little. The
	// limit shrinks by exactly the gradient; nothing like Gradient2's QueueSize is added.
	d := a.next(full(100, 11, 0), Decision{})
	require.Equal(t, ReasonGradient, d.Reason)
	require.InDelta(t, 1.08/1.1, d.Gradient, 1e-12)
	require.Equal(t, 98, d.LimitAfter)
	// Far above: at most halved.
	d = a.next(full(98, 100, 0), Decision{})
	require.Equal(t, 0.5, d.Gradient)
	require.Equal(t, 49, d.LimitAfter)
	require.Equal(t, 10*time.Millisecond, d.LongLatency, "congested windows teach nothing")
}

func TestLossDelayGrowthSlowsNearTheTolerance(t *testing.T) {
	for _, tc := range []struct {
		latency float64
		want    float64
	}{
		{9, 100 + 20},               // below the baseline: the whole IncreaseRatio
		{10, 100 + 20},              // at it
		{10.4, 100 + 20*0.5},        // halfway to 10.8: half of it
		{10.79, 100 + 20*0.25},      // at the tolerance: a quarter, never less
		{10.8, 100 + 20*0.25},       // on it: still within
		{10.81, 100 * 1.08 / 1.081}, // beyond: the gradient
	} {
		a := newTestLossDelay(t, Config{InitialLimit: 100})
		d := a.next(full(100, tc.latency, 0), Decision{})
		require.Equal(t, int(tc.want), d.LimitAfter, "latency %g ms", tc.latency)
	}
	// A small limit grows by a slot a window rather than a share of itself, so that a
	// fleet's small limits converge to equal shares.
	a := newTestLossDelay(t, Config{InitialLimit: 2})
	require.Equal(t, 3, a.next(full(2, 10, 0), Decision{}).LimitAfter)
}

func TestLossDelayHoldsWhenFewSlotsAreUsed(t *testing.T) {
	a := newTestLossDelay(t, Config{InitialLimit: 100})
	d := a.next(window{samples: 100, meanLatency: 30 * ms, maxInFlight: 49}, Decision{})
	require.Equal(t, ReasonHold, d.Reason)
	require.True(t, d.AppLimited)
	require.Equal(t, 100, d.LimitAfter)
	d = a.next(window{samples: 100, meanLatency: 8 * ms, maxInFlight: 10}, Decision{})
	require.Equal(t, ReasonHold, d.Reason)
	require.Equal(t, 9*time.Millisecond, d.LongLatency, "a lower latency pulls the baseline halfway down")
}

// A permanent shift: the dependency is twice as slow, whatever the load. Cutting the limit
// does not bring latency down, so after RelearnAfter windows, once the cuts have taken the
// limit to an eighth, the baseline takes the new latency and the limit goes back.
func TestLossDelayRelearnsAfterAShift(t *testing.T) {
	a := newTestLossDelay(t, Config{InitialLimit: 64})
	var reasons []Reason
	var limits []int
	for range 5 {
		d := a.next(full(a.limitInt(), 20, 0), Decision{})
		reasons = append(reasons, d.Reason)
		limits = append(limits, d.LimitAfter)
	}
	require.Equal(t, []Reason{ReasonGradient, ReasonGradient, ReasonGradient, ReasonGradient, ReasonRelearn}, reasons)
	require.Equal(t, []int{34, 18, 10, 5, 64}, limits) // 64 * (1.08/2)^k, then back
	require.Equal(t, 20*time.Millisecond, time.Duration(a.baseline))
	require.Equal(t, ReasonGrowth, a.next(full(64, 20, 0), Decision{}).Reason)

	// A queue of its own making falls as the limit is cut: no relearning.
	a = newTestLossDelay(t, Config{InitialLimit: 64})
	for i := range 10 {
		latency := 20 * math.Pow(0.8, float64(i))
		d := a.next(full(a.limitInt(), latency, 0), Decision{})
		require.NotEqual(t, ReasonRelearn, d.Reason, "window %d", i)
	}
	require.LessOrEqual(t, a.baseline, 10*ms, "the baseline only fell, with the latency")

	// Nor when the limit is pinned at MinLimit: in a fleet, the others keep the queue.
	a = newTestLossDelay(t, Config{InitialLimit: 1})
	for range 20 {
		require.Equal(t, ReasonGradient, a.next(full(1, 20, 0), Decision{}).Reason)
	}
}

func TestLossDelayProbesEveryJitteredInterval(t *testing.T) {
	for _, tc := range []struct {
		random float64
		after  int // windows between the end of one probe and the start of the next
	}{
		{0, 50},     // 100 * 0.5
		{0.5, 75},   // 100 * 0.75
		{0.999, 99}, // just under 100
	} {
		a := newTestLossDelay(t, Config{InitialLimit: 40, ProbeInterval: 100, Random: func() float64 { return tc.random }})
		a.untilProbe = jitteredInterval(100, tc.random)
		windows := 0
		for {
			windows++
			d := a.next(full(a.limitInt(), 10.8, 0), Decision{}) // at the tolerance: steady growth
			if d.Reason == ReasonProbe {
				break
			}
			require.Less(t, windows, 200)
		}
		require.Equal(t, tc.after, windows, "random %g", tc.random)
		before := a.afterProbe
		require.Equal(t, int(before/2), a.limitInt(), "the probe runs at half the limit")
		a.next(full(a.limitInt(), 12, 0), Decision{}) // draining: ignored
		d := a.next(full(a.limitInt(), 9, 0), Decision{})
		require.Equal(t, ReasonProbe, d.Reason)
		require.Equal(t, 9*time.Millisecond, d.LongLatency, "a lower latency is the new baseline")
		require.Equal(t, int(before), d.LimitAfter, "back to the limit before the probe")
		require.Equal(t, tc.after, a.untilProbe)
	}
	// A probe that measures more than the baseline leaves it: it may be a fleet's queue.
	a := newTestLossDelay(t, Config{InitialLimit: 40, ProbeInterval: 1})
	a.startProbe(20)
	a.next(full(20, 30, 0), Decision{})
	require.Equal(t, 10*time.Millisecond, a.next(full(20, 15, 0), Decision{}).LongLatency)
	// No periodic probe by default.
	a = newTestLossDelay(t, Config{InitialLimit: 40})
	for range 1000 {
		require.NotEqual(t, ReasonProbe, a.next(full(a.limitInt(), 10.8, 0), Decision{}).Reason)
	}
}

func TestLossDelayStaysInBounds(t *testing.T) {
	a := newTestLossDelay(t, Config{MinLimit: 5, MaxLimit: 30, InitialLimit: 10})
	for i := range 2000 {
		var w window
		switch i % 7 {
		case 0:
			w = window{samples: 10, drops: 10, meanLatency: 1e12, maxInFlight: 1}
		case 1:
			w = window{samples: 10, meanLatency: 0, maxInFlight: 1000}
		case 2:
			w = window{samples: 1, drops: 0, meanLatency: math.MaxFloat64 / 2, maxInFlight: 1000}
		default:
			w = full(1000, float64(i%13), 0)
		}
		d := a.next(w, Decision{})
		require.GreaterOrEqual(t, d.LimitAfter, 5)
		require.LessOrEqual(t, d.LimitAfter, 30)
		require.False(t, math.IsNaN(a.limit) || math.IsNaN(a.baseline) || math.IsNaN(d.Gradient))
	}
}

// Through a limiter on a ManualClock: the decisions, their reasons and the baseline are
// published in the snapshot, and the probe's jitter comes from Config.Random.
func TestLossDelayOnALimiter(t *testing.T) {
	var draws int
	var reasons []Reason
	l, clock := newManual(t, Config{
		Algorithm: LossDelay, InitialLimit: 10, MinWindowSamples: 1, ProbeInterval: 4,
		Random: func() float64 { draws++; return 0.5 },
	})
	// n calls at once, taking latency and ending with err; the last one closes the window.
	window := func(n int, latency time.Duration, err error) Decision {
		clock.Advance(time.Second - latency)
		held := acquireN(t, l, n)
		clock.Advance(latency - time.Nanosecond)
		for _, p := range held[1:] {
			p.Done(err)
		}
		clock.Advance(time.Nanosecond)
		held[0].Done(err)
		d := l.Snapshot().Last
		reasons = append(reasons, d.Reason)
		return d
	}
	window(10, 10*time.Millisecond, nil)
	require.Equal(t, 1, l.Limit(), "probing at MinLimit")
	window(1, 10*time.Millisecond, nil)
	d := window(1, 10*time.Millisecond, nil)
	require.Equal(t, 10, d.LimitAfter)
	require.Equal(t, 10*time.Millisecond, l.Snapshot().LongLatency)
	require.Equal(t, 1, draws)
	window(10, 10*time.Millisecond, nil)
	window(l.Limit(), 10*time.Millisecond, context.DeadlineExceeded)
	for range 3 {
		window(l.Limit(), 10*time.Millisecond, nil)
	}
	require.Equal(t, []Reason{
		ReasonProbe, ReasonProbe, ReasonProbe, // the first probe: start, drain, measure
		ReasonGrowth, ReasonLoss, // then 4 * (0.5 + 0.5/2) = 3 windows, the third
		ReasonProbe, ReasonProbe, ReasonProbe, // starting the next probe
	}, reasons)
	require.Equal(t, 2, draws)
}

func (a *lossDelay) limitInt() int { return int(a.limit) }
