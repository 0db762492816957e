package adaptivelimit

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// newTestLossDelay returns LossDelay with the defaults but for c, its baseline measured:
// 10 ms, with the limit at c's InitialLimit (default 20), not doubling.
func newTestLossDelay(t *testing.T, c Config) *lossDelay {
	t.Helper()
	c.Algorithm = LossDelay
	c, err := c.resolved()
	require.NoError(t, err)
	a := newLossDelay(c)
	a.baseline = 10 * ms
	a.confirm()
	return a
}

// full is a window in which limit calls ran at once with mean latency ms milliseconds.
func full(limit int, latency float64, drops uint64) window {
	return window{samples: 1000, drops: drops, meanLatency: latency * ms, maxInFlight: limit}
}

func TestLossDelayStartsWithoutABlackout(t *testing.T) {
	c, err := Config{Algorithm: LossDelay, InitialLimit: 40}.resolved()
	require.NoError(t, err)
	a := newLossDelay(c)
	// The first window filled its 40 slots at 10 ms: the latency may hold a queue of its own.
	// A probe at half the limit, never lower, judges it; the baseline is not published yet.
	d := a.next(full(40, 10, 0), Decision{})
	require.Equal(t, CauseProbe, d.Cause)
	require.Equal(t, 20, d.LimitAfter, "half the limit, not MinLimit")
	require.Zero(t, d.LongLatency)
	// Half the calls, the same latency: no queue of its own, and a limiter that did not start
	// in loss needs no second probe. The baseline is measured, and the limit comes back at
	// once, doubled: the window before filled it at the baseline, and slow start begins, as
	// TCP's does, doubling while latency holds.
	d = a.next(full(20, 10, 0), Decision{})
	require.Equal(t, CauseProbe, d.Cause)
	require.Equal(t, 10*time.Millisecond, d.LongLatency)
	require.Equal(t, 80, d.LimitAfter)
	d = a.next(full(80, 10, 0), Decision{})
	require.Equal(t, CauseGrowth, d.Cause)
	require.Equal(t, 160, d.LimitAfter)

	// A probe that reads more than oneReading away from the window before, without falling
	// beyond the noise, leaves the baseline to a second probe.
	a = newLossDelay(c)
	a.next(full(40, 10, 0), Decision{})
	d = a.next(full(20, 10.6, 0), Decision{})
	require.Equal(t, CauseProbe, d.Cause)
	require.Equal(t, 40, d.LimitAfter)
	require.Zero(t, d.LongLatency, "one reading is not yet a baseline")
	d = a.next(full(40, 10, 0), Decision{})
	require.Equal(t, CauseProbe, d.Cause)
	require.Equal(t, 20, d.LimitAfter, "held, then the second probe")
	d = a.next(full(20, 10, 0), Decision{})
	require.Equal(t, 40, d.LimitAfter)
	require.Equal(t, 10.15, math.Round(d.LongLatency.Seconds()*1e5)/100, "the two readings, with the windows before theirs")

	// A first window that did not fill its limit queued nothing of its own: no probe.
	a = newLossDelay(c)
	d = a.next(window{samples: 100, meanLatency: 10 * ms, maxInFlight: 5}, Decision{})
	require.Equal(t, CauseAppLimited, d.Cause)
	require.Equal(t, 40, d.LimitAfter)
	require.Equal(t, 10*time.Millisecond, d.LongLatency)
	a = newLossDelay(c)
	d = a.next(window{samples: 100, meanLatency: 10 * ms, maxInFlight: 30}, Decision{})
	require.Equal(t, CauseSteady, d.Cause, "the first window gives the baseline and keeps the limit")
	require.Equal(t, 10*time.Millisecond, d.LongLatency)
}

// A slow start that doubles the limit into loss ends there: what is left to regain is the limit
// before that doubling, which the dependency held, so the limit does not double into the same
// loss again (the capacity here is 40).
func TestLossDelaySlowStartEndsAtLoss(t *testing.T) {
	c, err := Config{Algorithm: LossDelay, InitialLimit: 40}.resolved()
	require.NoError(t, err)
	a := newLossDelay(c)
	a.next(full(40, 10, 0), Decision{})
	d := a.next(full(20, 10, 0), Decision{})
	require.Equal(t, 80, d.LimitAfter, "the probe confirmed the baseline: slow start")
	d = a.next(window{samples: 1000, drops: 50, meanLatency: 20 * ms, maxInFlight: 80}, Decision{})
	require.Equal(t, CauseDrop, d.Cause)
	require.Equal(t, 43, d.LimitAfter, "80 cut by the latency's gradient, 1.08*10/20")
	for range 3 {
		before := d.LimitAfter
		d = a.next(full(before, 10, 0), Decision{})
		require.Equal(t, CauseGrowth, d.Cause)
		require.Less(t, d.LimitAfter, before*3/2, "grows by steps, does not double back to 80")
	}
}

// A fleet that starts far above the capacity: the first window loses most of its calls, and
// the next ones see the fleet's queue. While a probe's latency falls with its calls, the fleet
// still queues: the limit stays halved and the next window probes again. Once it falls by
// less, the probe ran below the capacity: the limit comes back at the share of the calls that
// did not queue, less a twentieth, and the baseline is the lowest latency of the next three
// windows. No window without loss cuts the limit to less than half the window before's.
func TestLossDelayFleetStart(t *testing.T) {
	c, err := Config{Algorithm: LossDelay, InitialLimit: 20, SubUnitFloor: 1}.resolved() // below 1: TestLossDelayBelowOne
	require.NoError(t, err)
	a := newLossDelay(c)
	d := a.next(window{samples: 1000, drops: 600, meanLatency: 45 * ms, maxInFlight: 20}, Decision{})
	require.Equal(t, CauseDrop, d.Cause)
	require.Equal(t, 10, d.LimitAfter, "cut by what got through, at most by half")
	type step struct {
		latency float64 // of the window, or of the probe that it ends
		cause   Cause
		limit   int
	}
	previous := d.LimitAfter
	for i, s := range []step{
		{30, CauseProbe, 5}, // the first window without loss, at 10: a probe at half
		{15, CauseProbe, 5}, // the probe's latency halved with its calls: halved it stays
		{15, CauseProbe, 3}, // the window at 5 reads the same, and ends with the next probe, at 3
		{10, CauseProbe, 3}, // a fall by a third only: back at 5*(10/15)*0.95 = 3.2
		{10.4, CauseSteady, 3},
		{9.8, CauseSteady, 3},
		{10.1, CauseSteady, 3}, // the third window: the baseline, 9.8 ms, the lowest
	} {
		d = a.next(full(previous, s.latency, 0), Decision{})
		require.Equal(t, s.cause, d.Cause, "step %d", i)
		require.Equal(t, s.limit, d.LimitAfter, "step %d", i)
		require.GreaterOrEqual(t, 2*d.LimitAfter, previous, "at most halved without loss")
		previous = d.LimitAfter
	}
	require.Equal(t, 9800*time.Microsecond, d.LongLatency)
	require.InDelta(t, 5*10.0/15*0.95, a.limit, 1e-9, "held at the share that did not queue while the baseline was read")
	d = a.next(full(3, 10, 0), Decision{})
	require.Equal(t, CauseGrowth, d.Cause)
	require.Less(t, d.LimitAfter, 6, "no slow start: the capacity is the fleet's")
}

func TestLossDelayLossBacksOffAndTeachesNothing(t *testing.T) {
	for _, tc := range []struct {
		name        string
		w           window
		want        int
		wantCause   Cause
		wantRegains bool
	}{
		// 2% of the calls dropped: above the 1% threshold. From min(limit 50, 40 in flight),
		// times BackoffRatio 0.9.
		{"share above threshold", window{samples: 1000, drops: 20, meanLatency: 10 * ms, maxInFlight: 40}, 36, CauseDrop, true},
		// 0.5% dropped: a healthy dependency's tail. Latency within tolerance: growth.
		{"share below threshold", window{samples: 1000, drops: 5, meanLatency: 10 * ms, maxInFlight: 50}, 60, CauseGrowth, false},
		// 2 of 100: above the share, but two timeouts in a hundred calls say little.
		{"too few drops", window{samples: 100, drops: 2, meanLatency: 10 * ms, maxInFlight: 50}, 60, CauseGrowth, false},
		// 80% dropped: cut by what got through, at most by half.
		{"heavy loss", window{samples: 1000, drops: 800, meanLatency: 10 * ms, maxInFlight: 50}, 25, CauseDrop, true},
		// Drops and latency 1.5 times the tolerance: the gradient, 1.08*10/18 = 0.6, cuts more.
		{"loss and latency", window{samples: 1000, drops: 20, meanLatency: 18 * ms, maxInFlight: 50}, 30, CauseDrop, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newTestLossDelay(t, Config{InitialLimit: 50})
			d := a.next(tc.w, Decision{})
			require.Equal(t, tc.wantCause, d.Cause)
			require.Equal(t, tc.want, d.LimitAfter)
			require.Equal(t, 10*time.Millisecond, d.LongLatency, "the baseline learns nothing")
			require.Equal(t, tc.wantRegains, a.regain == 50)
		})
	}
}

func TestLossDelayRegainsTheLimitAfterLoss(t *testing.T) {
	a := newTestLossDelay(t, Config{InitialLimit: 40, SubUnitFloor: 1})
	// An incident: every call times out, at the timeout's latency, for a long while. The
	// limit goes to MinLimit and the baseline stays. (Below 1: TestLossDelayBelowOne.)
	for range 30 {
		d := a.next(window{samples: 20, drops: 20, meanLatency: 50 * ms, maxInFlight: a.limitInt()}, Decision{})
		require.Equal(t, CauseDrop, d.Cause)
		require.Equal(t, 10*time.Millisecond, d.LongLatency)
	}
	require.Equal(t, 1, a.limitInt())
	// Once it is over, the limit doubles back to the 40 it had before, then grows by steps.
	var got []int
	for range 8 {
		got = append(got, a.next(full(a.limitInt(), 10, 0), Decision{}).LimitAfter)
	}
	require.Equal(t, []int{2, 4, 8, 16, 32, 40, 48, 59}, got)
}

func TestLossDelayCeiling(t *testing.T) {
	w := full(50, 40, 0) // 40 ms: congested too, but the ceiling is checked first
	a := newTestLossDelay(t, Config{InitialLimit: 50})
	d := a.next(w, Decision{})
	require.Equal(t, CauseLatency, d.Cause, "no ceiling by default")
	require.Equal(t, 25, d.LimitAfter)

	a = newTestLossDelay(t, Config{InitialLimit: 50, LatencyCeiling: 30 * time.Millisecond})
	d = a.next(w, Decision{})
	require.Equal(t, CauseCeiling, d.Cause)
	require.Equal(t, 25, d.LimitAfter, "min(BackoffRatio, gradient 0.27 clamped to 0.5)")
	d = a.next(full(25, 10.5, 0), Decision{})
	require.Equal(t, CauseGrowth, d.Cause, "under the ceiling and within tolerance")
}

func TestLossDelayGradientCutsTheQueue(t *testing.T) {
	a := newTestLossDelay(t, Config{InitialLimit: 100})
	// 1.1 times the baseline, above the tolerance of 1.08: cut by the queueing beyond half
	// the tolerance, 1.04*10/11, and grown by the pace of a limit of 100.
	d := a.next(full(100, 11, 0), Decision{})
	require.Equal(t, CauseLatency, d.Cause)
	require.InDelta(t, 1.04/1.1, d.Gradient, 1e-12)
	require.InDelta(t, 100*1.04/1.1+pace(1.08, 100), a.limit, 1e-9)
	require.Equal(t, 95, d.LimitAfter)
	// Far above: at most halved.
	d = a.next(full(95, 100, 0), Decision{})
	require.Equal(t, 0.5, d.Gradient)
	require.Equal(t, 48, d.LimitAfter)
	require.Equal(t, 10*time.Millisecond, d.LongLatency, "congested windows teach nothing")
}

func TestLossDelayGrowthSlowsNearTheTolerance(t *testing.T) {
	p := pace(1.08, 100) // 1.15 slots
	for _, tc := range []struct {
		latency float64
		want    float64
	}{
		{9, 100 + p + 20},                  // below the baseline: the whole IncreaseRatio, and the pace
		{10, 100 + p + 20},                 // at it
		{10.2, 100 + p + 20*0.5},           // halfway to half the tolerance, 10.4: half of it
		{10.4, 100 + p},                    // there: the pace only
		{10.8, 100*10.4/10.8 + p},          // at the tolerance: the queue beyond 10.4 cut
		{10.81, 100*10.4/10.81 + p},        // beyond: the same rule, called congestion
		{40, 50 + p},                       // far beyond: at most halved
		{10.4 * 1.5, 100/1.5 + p},          // a third of the latency queueing beyond 10.4
		{10.4 * 1.02, 100/1.02 + p},        // 2% of it
		{10.4 * 1.001, 100/1.001 + p},      // a little: settles where the pace makes up for it
		{10.4 * 0.999, 100 + p + 20*0.025}, // just under 10.4: no cut, a little room
	} {
		a := newTestLossDelay(t, Config{InitialLimit: 100})
		a.next(full(100, tc.latency, 0), Decision{})
		require.InDelta(t, tc.want, a.limit, 0.03, "latency %g ms", tc.latency)
	}
}

// A fleet's clients see the same latency, with baselines measured half a percent apart. Each
// loses to the queue in proportion to its limit and grows by less than in proportion: they
// converge to near-equal shares, from very unequal ones, and hold the queue small.
func TestLossDelayFleetConvergesToFairShares(t *testing.T) {
	const servers = 100.0
	baselines := []float64{9.95, 10, 10.05, 9.98, 10.02}
	limits := []float64{2, 5, 10, 40, 100}
	var fleet []*lossDelay
	for i, b := range baselines {
		a := newTestLossDelay(t, Config{InitialLimit: int(limits[i])})
		a.baseline = b * ms
		fleet = append(fleet, a)
	}
	var sum float64
	for range 300 {
		sum = 0
		for _, a := range fleet {
			sum += math.Floor(a.limit)
		}
		latency := 10 * max(1, sum/servers) // a FIFO queue in front of 100 servers
		for _, a := range fleet {
			a.next(full(int(a.limit), latency, 0), Decision{})
		}
	}
	var total, squares float64
	for _, a := range fleet {
		total += a.limit
		squares += a.limit * a.limit
	}
	jain := total * total / (float64(len(fleet)) * squares)
	require.Greater(t, jain, 0.95, "Jain's index of the limits")
	require.InDelta(t, 1.1*servers, sum, 0.1*servers, "the fleet fills the servers and queues little")
}

func TestLossDelayHoldsWhenFewSlotsAreUsed(t *testing.T) {
	a := newTestLossDelay(t, Config{InitialLimit: 100})
	d := a.next(window{samples: 100, meanLatency: 30 * ms, maxInFlight: 49}, Decision{})
	require.Equal(t, CauseAppLimited, d.Cause)
	require.Equal(t, CauseAppLimited, d.Cause)
	require.Equal(t, 100, d.LimitAfter)
	d = a.next(window{samples: 100, meanLatency: 8 * ms, maxInFlight: 10}, Decision{})
	require.Equal(t, CauseAppLimited, d.Cause)
	require.Equal(t, 9*time.Millisecond, d.LongLatency, "a lower latency pulls the baseline halfway down")
}

// A permanent shift: the dependency is twice as slow, whatever the load. Cutting the limit
// does not bring latency down, so after RelearnAfter windows, once the cuts have taken the
// limit to an eighth, the baseline takes the new latency and the limit goes back.
func TestLossDelayRelearnsAfterAShift(t *testing.T) {
	a := newTestLossDelay(t, Config{InitialLimit: 64})
	var got []Cause
	var limits []int
	for range 5 {
		d := a.next(full(a.limitInt(), 20, 0), Decision{})
		got = append(got, d.Cause)
		limits = append(limits, d.LimitAfter)
	}
	require.Equal(t, []Cause{CauseLatency, CauseLatency, CauseLatency, CauseLatency, CauseRelearn}, got)
	require.Equal(t, []int{34, 18, 10, 5, 64}, limits) // 64 * (1.08/2)^k, then back
	require.Equal(t, 20*time.Millisecond, time.Duration(a.baseline))
	require.Equal(t, CauseGrowth, a.next(full(64, 20, 0), Decision{}).Cause)

	// A queue of its own making falls as the limit is cut: no relearning.
	a = newTestLossDelay(t, Config{InitialLimit: 64})
	for i := range 10 {
		latency := 20 * math.Pow(0.8, float64(i))
		d := a.next(full(a.limitInt(), latency, 0), Decision{})
		require.NotEqual(t, CauseRelearn, d.Cause, "window %d", i)
	}
	require.LessOrEqual(t, a.baseline, 10*ms, "the baseline only fell, with the latency")

	// Nor when the limit is pinned at MinLimit: in a fleet, the others keep the queue.
	a = newTestLossDelay(t, Config{InitialLimit: 1, SubUnitFloor: 1})
	for range 20 {
		require.Equal(t, CauseLatency, a.next(full(1, 20, 0), Decision{}).Cause)
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
			if d.Cause == CauseProbe {
				break
			}
			require.Less(t, windows, 200)
		}
		require.Equal(t, tc.after, windows, "random %g", tc.random)
		before := a.afterProbe
		require.Equal(t, int(math.Ceil(math.Floor(before)/2)), a.limitInt(), "the probe runs at half the limit")
		d := a.next(full(a.limitInt(), 9, 0), Decision{})
		require.Equal(t, CauseProbe, d.Cause)
		require.Equal(t, 9*time.Millisecond, d.LongLatency, "a lower latency is the new baseline")
		require.Equal(t, int(before), d.LimitAfter, "back to the limit before the probe")
		require.Equal(t, tc.after, a.untilProbe)
	}
	// A probe that measures more than the baseline leaves it: it may be a fleet's queue.
	a := newTestLossDelay(t, Config{InitialLimit: 40, ProbeInterval: 1})
	a.startProbe(15*ms, 1000)
	require.Equal(t, 10*time.Millisecond, a.next(full(20, 15, 0), Decision{}).LongLatency)
	// No periodic probe by default.
	a = newTestLossDelay(t, Config{InitialLimit: 40})
	for range 1000 {
		require.NotEqual(t, CauseProbe, a.next(full(a.limitInt(), 10.8, 0), Decision{}).Cause)
	}
}

func TestLossDelayStaysInBounds(t *testing.T) {
	c := Config{MinLimit: 5, MaxLimit: 30, InitialLimit: 10}
	fresh, err := Config{Algorithm: LossDelay, MinLimit: 5, MaxLimit: 30, InitialLimit: 10}.resolved()
	require.NoError(t, err)
	for name, a := range map[string]*lossDelay{
		"baseline measured": newTestLossDelay(t, c),
		// A start in loss, then windows of every kind, latencies of 0 among them.
		"start in loss": newLossDelay(fresh),
	} {
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
			require.GreaterOrEqual(t, d.LimitAfter, 5, "%s, window %d", name, i)
			require.LessOrEqual(t, d.LimitAfter, 30, "%s, window %d", name, i)
			require.False(t, math.IsNaN(a.limit) || math.IsNaN(a.baseline) || math.IsNaN(d.Gradient), "%s, window %d", name, i)
		}
	}
	// A start in loss, then calls that take no time at all (a ManualClock that does not move):
	// probes that read 0 after windows of 0.
	a := newLossDelay(fresh)
	a.next(window{samples: 1000, drops: 600, meanLatency: 45 * ms, maxInFlight: 10}, Decision{})
	for i := range 20 {
		d := a.next(window{samples: 1000, meanLatency: 0, maxInFlight: 30}, Decision{})
		require.GreaterOrEqual(t, d.LimitAfter, 5, "window %d", i)
		require.False(t, math.IsNaN(a.limit) || math.IsNaN(a.baseline), "window %d", i)
	}
}

// Through a limiter on a ManualClock: the decisions, their causes and the baseline are
// published in the snapshot, and the probe's jitter comes from Config.Random. A probe is
// short: it waits for the calls admitted before it, measures those admitted at half the
// limit, and the limit comes back.
func TestLossDelayOnALimiter(t *testing.T) {
	var draws int
	var got []Cause
	l, clock := newManual(t, Config{
		Algorithm: LossDelay, InitialLimit: 10, MinWindowSamples: 1, ProbeInterval: 4,
		Random: func() float64 { draws++; return 0.5 },
	})
	// n calls at once, taking latency and ending with err, after wait; the last one to finish
	// closes a window that is over.
	round := func(wait time.Duration, n int, latency time.Duration, err error) {
		clock.Advance(wait)
		held := acquireN(t, l, n)
		clock.Advance(latency - time.Nanosecond)
		for p := range each(held[1:]) {
			p.Done(err)
		}
		clock.Advance(time.Nanosecond)
		held[0].Done(err)
		got = append(got, l.Snapshot().Last.Cause)
	}
	round(time.Second-10*time.Millisecond, 10, 10*time.Millisecond, nil)
	require.Equal(t, 5, l.Limit(), "probing at half the limit")
	require.Zero(t, l.Snapshot().LongLatency, "no baseline published before probes confirm it")
	// The probe drains for twice the latency, 20 ms, then measures for as long as its 5 slots
	// take to answer 100 calls at 10 ms, at most 200 ms from its start.
	round(10*time.Millisecond, 5, 10*time.Millisecond, nil)
	require.Equal(t, 5, l.Limit(), "drained, measuring")
	require.EqualValues(t, 1, l.Snapshot().Windows, "the drain is no window of its own")
	round(175*time.Millisecond, 5, 10*time.Millisecond, nil)
	require.Equal(t, 20, l.Limit(), "the limit back 200 ms after the probe began, doubled")
	// It read as much as the window before, and this limiter did not start in loss: the
	// baseline is confirmed by one probe, and slow start begins with the rest of the window.
	require.Equal(t, 10*time.Millisecond, l.Snapshot().LongLatency.Round(time.Microsecond))
	require.Equal(t, 1, draws)
	for _, wait := range []time.Duration{790, 990, 990} {
		round(wait*time.Millisecond, l.Limit(), 10*time.Millisecond, nil)
	}
	require.Equal(t, []Cause{
		CauseProbe, CauseProbe, CauseProbe, // the probe: start, (the drain,) end
		// then 4 * (0.5 + 0.5/2) = 3 windows, the third starting the next probe; the first, the
		// rest of the probe's, closed by the probe's last calls, used 5 of its 20 slots
		CauseAppLimited, CauseGrowth, CauseProbe,
	}, got)
	require.Equal(t, 40, l.Limit(), "the window grew to 80, and the probe runs at half")
	round(10*time.Millisecond, 40, 10*time.Millisecond, nil) // its drain
	round(20*time.Millisecond, 40, 10*time.Millisecond, nil) // its measure: 100 calls on 40 slots
	require.Equal(t, CauseProbe, l.Snapshot().Last.Cause)
	require.Equal(t, 80, l.Limit(), "the probe ends")
	require.Equal(t, 2, draws, "the time to the next probe")
}

// A window in which most calls time out closes at once, before its end: the limit backs off
// after the first MinWindowSamples drops rather than after a whole window of timeouts. Only
// LossDelay does this; the other algorithms keep the spec's windows. (Below 1, before its
// first baseline, LossDelay closes at fewer drops: TestLossDelayStartClosesAtTheThirdDrop.)
func TestLossDelayClosesAWindowOfLossEarly(t *testing.T) {
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		l, clock := newManual(t, Config{Algorithm: alg, InitialLimit: 40, MinWindowSamples: 10, SubUnitFloor: 1})
		held := acquireN(t, l, 40)
		clock.Advance(50 * time.Millisecond)
		for p := range each(held[:5]) {
			p.Done(nil)
		}
		for p := range each(held[5:16]) { // 11 of 16 dropped, 50 ms into a 1 s window
			p.Done(context.DeadlineExceeded)
		}
		if alg != LossDelay {
			require.Equal(t, 40, l.Limit(), "the window is not over")
			require.Zero(t, l.Snapshot().Last.Samples)
		} else {
			d := l.Snapshot().Last
			require.Equal(t, CauseDrop, d.Cause)
			require.Equal(t, 15, d.Samples, "closed at the tenth drop")
			require.Equal(t, 10, d.Drops)
			require.Less(t, l.Limit(), 40)
		}
		for p := range each(held[16:]) {
			p.Done(nil)
		}
		// A tail of timeouts among successes is no majority: the window runs its length.
		l, clock = newManual(t, Config{Algorithm: alg, InitialLimit: 40, MinWindowSamples: 10})
		held = acquireN(t, l, 40)
		clock.Advance(50 * time.Millisecond)
		for i := range held {
			p := &held[i]
			if i%3 == 0 {
				p.Done(context.DeadlineExceeded)
			} else {
				p.Done(nil)
			}
		}
		require.Zero(t, l.Snapshot().Last.Samples, "%v", alg)
	})
	// Calls that fail at once close no window before it has run a 32nd of its length.
	l, clock := newManual(t, Config{Algorithm: LossDelay, InitialLimit: 40, MinWindowSamples: 10})
	held := acquireN(t, l, 40)
	clock.Advance(10 * time.Millisecond)
	for p := range each(held[:20]) {
		p.Done(context.DeadlineExceeded)
	}
	require.Zero(t, l.Snapshot().Last.Samples, "10 ms into the window")
	clock.Advance(30 * time.Millisecond)
	for p := range each(held[20:]) {
		p.Done(context.DeadlineExceeded)
	}
	require.Equal(t, CauseDrop, l.Snapshot().Last.Cause, "40 ms into it")
}

func (a *lossDelay) limitInt() int { return int(a.limit) }

// A decision's cause agrees with the way the limit moved: the window is named by what decided
// it. Above the tolerance a small limit's pace may outgrow the cut, and below it a large
// limit's cut may outweigh the pace.
func TestLossDelayCauseAgreesWithDirection(t *testing.T) {
	a := newTestLossDelay(t, Config{InitialLimit: 6})
	a.limit = 6.8
	d := a.next(full(6, 10.9, 0), Decision{LimitBefore: 6})
	require.Equal(t, 7, d.LimitAfter, "1.09 times the baseline at 6")
	require.Equal(t, CauseGrowth, d.Cause)

	a = newTestLossDelay(t, Config{InitialLimit: 5000, MaxLimit: 10000})
	d = a.next(full(5000, 10.7, 0), Decision{LimitBefore: 5000})
	require.Less(t, d.LimitAfter, 5000, "1.07 times the baseline at 5000")
	require.Equal(t, CauseLatency, d.Cause)

	// Over windows of every kind, no cause contradicts its direction.
	const lo, hi = 2, 400
	a = newTestLossDelay(t, Config{MinLimit: lo, MaxLimit: hi, InitialLimit: 20})
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		limit := saturate(a.limit, lo, hi)
		w := full(limit, 10*(0.9+0.3*r.Float64()), 0)
		switch r.IntN(10) {
		case 0:
			w.drops = uint64(r.IntN(100))
		case 1:
			w.maxInFlight = limit / 3
		}
		d := a.next(w, Decision{LimitBefore: limit})
		d.LimitAfter = clamp(d.LimitAfter, lo, hi)
		c := causeOf(LossDelay, &d, lo, hi)
		switch {
		case d.LimitAfter > limit:
			require.Contains(t, []Cause{CauseGrowth, CauseProbe, CauseRelearn}, c, "window %d: %d -> %d", i, limit, d.LimitAfter)
		case d.LimitAfter < limit:
			require.Contains(t, []Cause{CauseDrop, CauseCeiling, CauseLatency, CauseProbe}, c, "window %d: %d -> %d", i, limit, d.LimitAfter)
		}
	}
}

// A limiter that lost calls before its first baseline probes it as its fleet does: the
// window its probe is the first part of ends where it would have without the probe, so that
// the probes of limiters started together stay together.
func TestLossDelayStartProbesStayInStep(t *testing.T) {
	l, clock := newManual(t, Config{Algorithm: LossDelay, InitialLimit: 20, MinWindowSamples: 10})
	a := l.algorithm.(*lossDelay)
	// window runs n calls for d, and ends them, the first lost of them dropped: the last at d.
	window := func(n, lost int, d time.Duration) {
		held := acquireN(t, l, n)
		clock.Advance(d / 2)
		for i := range held[:n-1] {
			if i >= n-1-lost { // the last: never a majority, so no early close
				held[i].Done(context.DeadlineExceeded)
			} else {
				held[i].Done(nil)
			}
		}
		clock.Advance(d - d/2)
		held[n-1].Done(nil)
	}
	window(20, 4, time.Second) // a fifth lost, too few to close it early
	require.Equal(t, CauseDrop, l.Snapshot().Last.Cause)
	window(l.Limit(), 0, time.Second)
	require.Equal(t, CauseProbe, l.Snapshot().Last.Cause, "the first window without loss, then a probe")
	require.Equal(t, draining, a.step)
	resume := a.resume
	window(l.Limit(), 0, 100*time.Millisecond) // the drain
	window(l.Limit(), 0, 100*time.Millisecond) // the measure
	require.Equal(t, rest, a.step, "the probe is over")
	require.False(t, a.confirmed())
	require.Equal(t, resume, l.window.end.Load(), "the rest of the window the probe began")
}
