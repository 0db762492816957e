package adaptivelimit

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func gradient2For(c Config) *gradient2 {
	c, err := c.resolved()
	if err != nil {
		panic(err)
	}
	return newGradient2(c)
}

// Closed forms of Gradient2 with the defaults (initial 20, queueSize 4, smoothing 0.2):
//   - latency within tolerance, gradient 1: est' = 0.8 est + 0.2 (est + 4) = est + 0.8;
//   - gradient at its floor of 0.5: est' = 0.8 est + 0.2 (0.5 est + 4) = 0.9 est + 0.8,
//     which tends to 8 = 2 x queueSize (the spec's "practical floor").
func TestGradient2ClosedForms(t *testing.T) {
	t.Run("steady latency grows 0.8 a window up to maxLimit", func(t *testing.T) {
		g := gradient2For(Config{MaxLimit: 100})
		for k := 1; k <= 200; k++ {
			got := g.next(window{meanLatency: 10e6, maxInFlight: 1000}, Decision{}).LimitAfter
			want := min(int(20+0.8*float64(k)+1e-9), 100)
			require.Equal(t, want, got, "window %d", k)
		}
	})
	t.Run("latency at 4x the long-term average decays to 2 x queueSize", func(t *testing.T) {
		g := gradient2For(Config{InitialLimit: 100})
		for range 10 { // the long-term average learns 10 ms
			g.next(window{meanLatency: 10e6, maxInFlight: 1000}, Decision{})
		}
		est := g.estimate
		for k := 1; k <= 60; k++ {
			d := g.next(window{meanLatency: 1e9, maxInFlight: 1000}, Decision{})
			got := d.LimitAfter
			est = 0.9*est + 0.8
			require.Equal(t, int(est), got, "window %d", k)
			require.Equal(t, 0.5, d.Gradient)
		}
		require.Equal(t, 8, int(g.estimate))
	})
	t.Run("app-limited windows keep the limit", func(t *testing.T) {
		g := gradient2For(Config{InitialLimit: 50})
		for k := 1; k <= 100; k++ {
			d := g.next(window{meanLatency: float64(k) * 1e6, maxInFlight: 24}, Decision{})
			got := d.LimitAfter
			require.Equal(t, 50, got)
			require.Equal(t, CauseAppLimited, d.Cause)
		}
	})
}

// gradient2Oracle is Netflix's Gradient2Limit.onSample and ExpAvgMeasurement, transcribed
// line by line from the Java for windows whose latency is above zero, independently of the
// implementation under test.
type gradient2Oracle struct {
	estimate, longValue, longSum float64
	longCount                    int
	c                            Config
}

func (o *gradient2Oracle) next(shortRtt float64, inflight int) int {
	if o.longCount < 10 {
		o.longCount++
		o.longSum += shortRtt
		o.longValue = o.longSum / float64(o.longCount)
	} else {
		f := 2.0 / (float64(o.c.LongWindow) + 1)
		o.longValue = o.longValue*(1-f) + shortRtt*f
	}
	longRtt := o.longValue
	if longRtt/shortRtt > 2 {
		o.longValue *= 0.95
	}
	if float64(inflight) < o.estimate/2 {
		return int(o.estimate)
	}
	gradient := math.Max(0.5, math.Min(1.0, o.c.RTTTolerance*longRtt/shortRtt))
	newLimit := o.estimate*gradient + float64(o.c.QueueSize)
	newLimit = o.estimate*(1-o.c.Smoothing) + newLimit*o.c.Smoothing
	newLimit = math.Max(float64(o.c.MinLimit), math.Min(float64(o.c.MaxLimit), newLimit))
	o.estimate = newLimit
	return int(o.estimate)
}

// latencyProfile gives window k's mean latency in nanoseconds and its most calls in flight.
type latencyProfile func(k int, r *rand.Rand) (float64, int)

func TestGradient2Trajectories(t *testing.T) {
	const ms = 1e6
	configs := map[string]Config{
		"defaults": {},
		"tuned":    {InitialLimit: 50, MinLimit: 5, MaxLimit: 400, Smoothing: 0.5, RTTTolerance: 2, LongWindow: 100, QueueSize: 8},
		"tight":    {InitialLimit: 3, MaxLimit: 10, Smoothing: 1, RTTTolerance: 1, LongWindow: 1, QueueSize: 1},
	}
	profiles := map[string]latencyProfile{
		"steady": func(int, *rand.Rand) (float64, int) { return 10 * ms, 1000 },
		"app-limited": func(k int, _ *rand.Rand) (float64, int) {
			return 10 * ms, k % 7
		},
		"overload then recovery": func(k int, _ *rand.Rand) (float64, int) {
			if k >= 100 && k < 300 {
				return 80 * ms, 1000
			}
			return 10 * ms, 1000
		},
		"new normal": func(k int, _ *rand.Rand) (float64, int) {
			if k >= 50 {
				return 30 * ms, 1000
			}
			return 10 * ms, 1000
		},
		"random": func(_ int, r *rand.Rand) (float64, int) {
			return (1 + r.Float64()*99) * ms, r.IntN(300)
		},
		"sub-microsecond": func(_ int, r *rand.Rand) (float64, int) {
			return 1 + float64(r.IntN(900)), 1000
		},
	}
	for cname, c := range configs {
		for pname, profile := range profiles {
			t.Run(cname+"/"+pname, func(t *testing.T) {
				resolved, err := c.resolved()
				require.NoError(t, err)
				g := newGradient2(resolved)
				oracle := gradient2Oracle{estimate: float64(resolved.InitialLimit), c: resolved}
				r := rand.New(rand.NewPCG(1, 2))
				for k := range 2000 {
					latency, inFlight := profile(k, r)
					want := oracle.next(latency, inFlight)
					got := g.next(window{meanLatency: latency, maxInFlight: inFlight}, Decision{}).LimitAfter
					require.Equal(t, want, got, "window %d: latency %v, in flight %d", k, latency, inFlight)
					require.InDelta(t, oracle.longValue, float64(g.longLatency()), 1, "window %d", k)
				}
			})
		}
	}
}

func TestGradient2OverloadThenRecovery(t *testing.T) {
	g := gradient2For(Config{})
	run := func(windows int, latency time.Duration) int {
		var limit int
		for range windows {
			limit = g.next(window{meanLatency: float64(latency), maxInFlight: 1000}, Decision{}).LimitAfter
		}
		return limit
	}
	grown := run(100, 10*time.Millisecond)
	require.Equal(t, 100, grown) // 20 + 0.8 x 100
	overloaded := run(30, 100*time.Millisecond)
	require.Less(t, overloaded, grown/2, "the limit falls under overload")
	recovered := run(100, 10*time.Millisecond)
	require.Greater(t, recovered, overloaded+50, "the limit grows again once latency is back")
}

// A window whose mean latency is 0 (a manual clock, or calls faster than the clock's tick)
// must never make the limit NaN, 0 or leave its bounds.
func TestGradient2ZeroLatency(t *testing.T) {
	for _, first := range []float64{0, 5e6} {
		g := gradient2For(Config{MaxLimit: 30})
		g.next(window{meanLatency: first, maxInFlight: 1000}, Decision{})
		for k := range 100 {
			d := g.next(window{meanLatency: 0, maxInFlight: 1000}, Decision{})
			got := d.LimitAfter
			require.False(t, math.IsNaN(g.estimate), "window %d", k)
			require.GreaterOrEqual(t, got, 1)
			require.LessOrEqual(t, got, 30)
			require.Equal(t, 1.0, d.Gradient)
		}
		require.Equal(t, 30, g.next(window{maxInFlight: 1000}, Decision{}).LimitAfter)
	}
}
