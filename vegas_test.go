package adaptivelimit

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func vegasFor(c Config) *vegas {
	c.Algorithm = Vegas
	c, err := c.resolved()
	if err != nil {
		panic(err)
	}
	return newVegas(c)
}

const ms = float64(time.Millisecond)

// Netflix's VegasLimitTest, one window per sample. Its decreaseSmoothing case halves the
// limit with a custom decrease function, which Config does not offer; here it runs with the
// default decrease of log10root(limit).
func TestVegasNetflixCases(t *testing.T) {
	fixed := Config{Alpha: 3, Beta: 6, Smoothing: 1, InitialLimit: 10, MaxLimit: 20}
	type step struct {
		latency  float64
		inFlight int
		want     int
	}
	cases := map[string]struct {
		c     Config
		steps []step
	}{
		// The first window learns the no-load latency; then no queue: + beta.
		"increase": {fixed, []step{{10 * ms, 10, 10}, {10 * ms, 11, 16}}},
		// queue = ceil(10 * (1 - 10/50)) = 8 > beta: - log10root(10).
		"decrease": {fixed, []step{{10 * ms, 10, 10}, {50 * ms, 11, 9}}},
		// queue = ceil(10 * (1 - 10/14)) = 3, in [alpha, beta]: no change.
		"no change within thresholds": {fixed, []step{{10 * ms, 10, 10}, {14 * ms, 14, 10}}},
		// log10root(10000) = 4: + beta = 6*4.
		"large limit increase": {
			Config{InitialLimit: 10000, MaxLimit: 20000},
			[]step{{10e9, 5000, 10000}, {10e9, 6000, 10024}},
		},
		// queue = 50 > beta = 12: 100 - 2 = 98, smoothed to 99; then 99 - 1 = 98, smoothed
		// to 98.5.
		"decrease with smoothing": {
			Config{Smoothing: 0.5, InitialLimit: 100},
			[]step{{10 * ms, 100, 100}, {20 * ms, 100, 99}, {20 * ms, 100, 98}},
		},
		"decrease without smoothing": {
			Config{InitialLimit: 100},
			[]step{{10 * ms, 100, 100}, {20 * ms, 100, 98}, {20 * ms, 100, 97}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := vegasFor(tc.c)
			for i, s := range tc.steps {
				d := v.next(window{meanLatency: s.latency, maxInFlight: s.inFlight}, Decision{})
				require.Equal(t, s.want, d.LimitAfter, "step %d", i)
			}
		})
	}
}

// One window after the no-load latency of 10 ms is known, per branch of the update.
func TestVegasBranches(t *testing.T) {
	cases := []struct {
		name       string
		c          Config
		w          window
		want       int
		appLimited bool
		noLoad     float64
	}{
		{"zero latency changes nothing", Config{}, window{maxInFlight: 100, drops: 3}, 20, false, 10 * ms},
		{"sub-nanosecond latency is zero", Config{}, window{meanLatency: 0.9, maxInFlight: 100}, 20, false, 10 * ms},
		{"lower latency is the new no-load latency", Config{}, window{meanLatency: 8 * ms, maxInFlight: 100, drops: 1}, 20, false, 8 * ms},
		{"a drop decreases by log10root", Config{}, window{meanLatency: 10 * ms, maxInFlight: 100, drops: 1}, 19, false, 10 * ms},
		{"a drop decreases even when app-limited", Config{}, window{meanLatency: 10 * ms, maxInFlight: 1, drops: 1}, 19, false, 10 * ms},
		{"a drop decreases by 2 above 100", Config{InitialLimit: 150}, window{meanLatency: 10 * ms, maxInFlight: 1, drops: 1}, 148, false, 10 * ms},
		{"under half the slots: app-limited", Config{}, window{meanLatency: 100 * ms, maxInFlight: 9}, 20, true, 10 * ms},
		{"half the slots are enough", Config{}, window{meanLatency: 10 * ms, maxInFlight: 10}, 26, false, 10 * ms},
		// queue = ceil(20 * (1 - 10/10.4)) = 1 <= threshold 1: + beta 6.
		{"queue at the threshold: + beta", Config{}, window{meanLatency: 10.4 * ms, maxInFlight: 20}, 26, false, 10 * ms},
		// queue = ceil(20 * (1 - 10/11)) = 2 < alpha 3: + log10root 1.
		{"queue under alpha: + log10root", Config{}, window{meanLatency: 11 * ms, maxInFlight: 20}, 21, false, 10 * ms},
		// queue = ceil(20 * (1 - 10/12)) = 4, in [3, 6]: kept.
		{"queue within [alpha, beta]: kept", Config{}, window{meanLatency: 12 * ms, maxInFlight: 20}, 20, false, 10 * ms},
		// queue = ceil(20 * (1 - 10/14)) = 6 = beta: kept.
		{"queue at beta: kept", Config{}, window{meanLatency: 14 * ms, maxInFlight: 20}, 20, false, 10 * ms},
		// queue = ceil(20 * (1 - 10/15)) = 7 > beta: - log10root 1.
		{"queue over beta: - log10root", Config{}, window{meanLatency: 15 * ms, maxInFlight: 20}, 19, false, 10 * ms},
		// log10root(150) = 2: queue = ceil(150 * (1 - 10/10.1)) = 2 <= 2: + 6*2.
		{"threshold and beta follow the limit", Config{InitialLimit: 150}, window{meanLatency: 10.1 * ms, maxInFlight: 150}, 162, false, 10 * ms},
		// queue = 4: kept within [3, 6] without, under alpha 5 with: + log10root 1.
		{"a set alpha", Config{Alpha: 5, Beta: 6}, window{meanLatency: 12 * ms, maxInFlight: 20}, 21, false, 10 * ms},
		// queue = 7 > beta 6 without, <= beta 8 with: kept.
		{"a set beta", Config{Alpha: 3, Beta: 8}, window{meanLatency: 15 * ms, maxInFlight: 20}, 20, false, 10 * ms},
		{"growth stops at maxLimit", Config{MaxLimit: 23}, window{meanLatency: 10 * ms, maxInFlight: 20}, 23, false, 10 * ms},
		{"decrease stops at minLimit", Config{InitialLimit: 5, MinLimit: 5}, window{meanLatency: 10 * ms, maxInFlight: 5, drops: 1}, 5, false, 10 * ms},
		// 0.5*20 + 0.5*26 = 23.
		{"smoothing", Config{Smoothing: 0.5}, window{meanLatency: 10 * ms, maxInFlight: 20}, 23, false, 10 * ms},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := vegasFor(tc.c)
			first := v.next(window{meanLatency: 10 * ms, maxInFlight: 1000}, Decision{})
			require.Equal(t, 10*time.Millisecond, first.LongLatency)
			require.Equal(t, v.decided(Decision{}).LimitAfter, first.LimitAfter, "the first window only learns")
			d := v.next(tc.w, Decision{})
			require.Equal(t, tc.want, d.LimitAfter)
			require.Equal(t, tc.appLimited, d.Cause == CauseAppLimited)
			require.Equal(t, time.Duration(tc.noLoad), d.LongLatency)
			require.Equal(t, d.LongLatency, v.longLatency())
			require.Zero(t, d.Gradient)
		})
	}
}

func TestLog10Root(t *testing.T) {
	cases := map[int]int{0: 1, 1: 1, 9: 1, 10: 1, 99: 1, 100: 2, 999: 2, 1000: 3, 9999: 3, 10000: 4}
	if strconv.IntSize == 64 {
		e15 := int64(1e15) // a variable: the constant does not fit a 32-bit int
		cases[int(e15)-1], cases[int(e15)], cases[math.MaxInt] = 14, 15, 18
	} else {
		cases[math.MaxInt] = 9
	}
	for n, want := range cases {
		require.Equal(t, want, log10Root(n), "log10root(%d)", n)
	}
}

// vegasOracle is Netflix's VegasLimit._update and updateEstimatedLimit with its default
// functions, transcribed line by line from the Java, independently of the implementation
// under test. Where the Java clamps to 1 it clamps to MinLimit, and it refuses a latency of 0
// as the Java does by throwing.
type vegasOracle struct {
	estimatedLimit float64
	rttNoload      int64
	probeCount     int
	probeJitter    float64
	random         func() float64
	c              Config
}

func (o *vegasOracle) log10(t int) int {
	if t < 1000 {
		return max(1, int(math.Log10(float64(t)))) // the Java's lookup table
	}
	return int(math.Log10(float64(t)))
}

// resetProbeJitter is ThreadLocalRandom.nextDouble(0.5, 1).
func (o *vegasOracle) resetProbeJitter() {
	r := o.random()*(1-0.5) + 0.5
	if r >= 1 {
		r = math.Nextafter(1, 0)
	}
	o.probeJitter = r
}

func (o *vegasOracle) update(rtt int64, inflight int, didDrop bool) int {
	if rtt <= 0 {
		return int(o.estimatedLimit)
	}
	o.probeCount++
	if o.probeJitter*float64(o.c.ProbeMultiplier)*o.estimatedLimit <= float64(o.probeCount) {
		o.resetProbeJitter()
		o.probeCount = 0
		o.rttNoload = rtt
		return int(o.estimatedLimit)
	}
	if o.rttNoload == 0 || rtt < o.rttNoload {
		o.rttNoload = rtt
		return int(o.estimatedLimit)
	}
	queueSize := int(math.Ceil(o.estimatedLimit * (1 - float64(o.rttNoload)/float64(rtt))))
	var newLimit float64
	if didDrop {
		newLimit = o.estimatedLimit - float64(o.log10(int(o.estimatedLimit)))
	} else if float64(inflight*2) < o.estimatedLimit {
		return int(o.estimatedLimit)
	} else {
		alpha := 3 * o.log10(int(o.estimatedLimit))
		beta := 6 * o.log10(int(o.estimatedLimit))
		if o.c.Alpha != 0 {
			alpha, beta = o.c.Alpha, o.c.Beta
		}
		threshold := o.log10(int(o.estimatedLimit))
		if queueSize <= threshold {
			newLimit = o.estimatedLimit + float64(beta)
		} else if queueSize < alpha {
			newLimit = o.estimatedLimit + float64(o.log10(int(o.estimatedLimit)))
		} else if queueSize > beta {
			newLimit = o.estimatedLimit - float64(o.log10(int(o.estimatedLimit)))
		} else {
			return int(o.estimatedLimit)
		}
	}
	newLimit = math.Max(float64(o.c.MinLimit), math.Min(float64(o.c.MaxLimit), newLimit))
	newLimit = (1-o.c.Smoothing)*o.estimatedLimit + o.c.Smoothing*newLimit
	o.estimatedLimit = newLimit
	return int(o.estimatedLimit)
}

// windowProfile gives window k's mean latency in nanoseconds, its most calls in flight and
// whether it had a drop.
type windowProfile func(k int, r *rand.Rand) (float64, int, bool)

func TestVegasTrajectories(t *testing.T) {
	configs := map[string]Config{
		"defaults": {},
		"tuned":    {InitialLimit: 50, MinLimit: 5, MaxLimit: 400, Smoothing: 0.3, Alpha: 2, Beta: 5, ProbeMultiplier: 3},
		"large":    {InitialLimit: 900, MaxLimit: 20000, ProbeMultiplier: 1},
		"tight":    {InitialLimit: 1, MaxLimit: 3, ProbeMultiplier: 1},
	}
	profiles := map[string]windowProfile{
		"steady": func(int, *rand.Rand) (float64, int, bool) { return 10 * ms, 100000, false },
		"app-limited": func(k int, _ *rand.Rand) (float64, int, bool) {
			return 10 * ms, k % 7, false
		},
		"overload then recovery": func(k int, r *rand.Rand) (float64, int, bool) {
			if k >= 100 && k < 300 {
				return (50 + 30*r.Float64()) * ms, 100000, r.IntN(4) == 0
			}
			return (10 + r.Float64()) * ms, 100000, false
		},
		"new normal": func(k int, _ *rand.Rand) (float64, int, bool) {
			if k >= 50 {
				return 30 * ms, 100000, false
			}
			return 10 * ms, 100000, false
		},
		"random": func(_ int, r *rand.Rand) (float64, int, bool) {
			return (1 + r.Float64()*99) * ms, r.IntN(30000), r.IntN(10) == 0
		},
		"near the no-load latency": func(_ int, r *rand.Rand) (float64, int, bool) {
			return (10 + r.Float64()) * ms, 100000, r.IntN(50) == 0
		},
		"sub-nanosecond and zero": func(_ int, r *rand.Rand) (float64, int, bool) {
			return 3 * r.Float64(), 100000, r.IntN(10) == 0
		},
	}
	for cname, c := range configs {
		for pname, profile := range profiles {
			t.Run(cname+"/"+pname, func(t *testing.T) {
				c.Algorithm = Vegas
				c.Random = rand.New(rand.NewPCG(5, 6)).Float64
				resolved, err := c.resolved()
				require.NoError(t, err)
				v := newVegas(resolved)
				oracle := vegasOracle{estimatedLimit: float64(resolved.InitialLimit), c: resolved, random: rand.New(rand.NewPCG(5, 6)).Float64}
				oracle.resetProbeJitter()
				r := rand.New(rand.NewPCG(1, 2))
				for k := range 3000 {
					latency, inFlight, dropped := profile(k, r)
					w := window{meanLatency: latency, maxInFlight: inFlight}
					if dropped {
						w.drops = 1
					}
					want := oracle.update(int64(latency), inFlight, dropped)
					d := v.next(w, Decision{})
					require.Equal(t, clamp(want, resolved.MinLimit, resolved.MaxLimit), d.LimitAfter, "window %d: latency %v, in flight %d, drop %v", k, latency, inFlight, dropped)
					require.Equal(t, oracle.estimatedLimit, v.estimate, "window %d", k)
					require.Equal(t, time.Duration(oracle.rttNoload), d.LongLatency, "window %d", k)
					require.Equal(t, oracle.probeCount, v.probeCount, "window %d", k)
				}
			})
		}
	}
}

// The estimate is never NaN and the limit never leaves its bounds, whatever the windows,
// Random or tuning.
func TestVegasBounds(t *testing.T) {
	latencies := []float64{0, 0.5, 1, 2, 10 * ms, 1e9, 3.6e12, math.MaxInt64 / 2}
	randoms := []float64{0, 0.5, math.Nextafter(1, 0), 1, 7, -3, math.NaN()}
	r := rand.New(rand.NewPCG(7, 8))
	for seed := range 20 {
		minLimit := 1 + r.IntN(5)
		c := Config{
			MinLimit:        minLimit,
			MaxLimit:        minLimit + r.IntN(300),
			Smoothing:       0.01 + 0.99*r.Float64(),
			ProbeMultiplier: 1 + r.IntN(5),
			Random:          func() float64 { return randoms[r.IntN(len(randoms))] },
		}
		if seed%2 == 1 {
			c.Alpha = 1 + r.IntN(5)
			c.Beta = c.Alpha + 1 + r.IntN(5)
		}
		v := vegasFor(c)
		for k := range 2000 {
			w := window{meanLatency: latencies[r.IntN(len(latencies))], maxInFlight: r.IntN(400)}
			if r.IntN(5) == 0 {
				w.drops = 1
			}
			d := v.next(w, Decision{})
			require.False(t, math.IsNaN(v.estimate), "seed %d window %d", seed, k)
			require.GreaterOrEqual(t, v.probeJitter, 0.5)
			require.Less(t, v.probeJitter, 1.0)
			require.GreaterOrEqual(t, d.LimitAfter, c.MinLimit, "seed %d window %d", seed, k)
			require.LessOrEqual(t, d.LimitAfter, c.MaxLimit, "seed %d window %d", seed, k)
			require.GreaterOrEqual(t, d.LongLatency, time.Duration(0))
		}
	}
}

// The no-load latency is measured again after jitter*ProbeMultiplier*limit windows, the
// jitter drawn from Config.Random as 0.5 + Random()/2: once when the limiter is built, and
// again at each probe.
func TestVegasProbe(t *testing.T) {
	draws := []float64{0, 0.5, 0}
	drawn := 0
	v := vegasFor(Config{InitialLimit: 10, Random: func() float64 {
		x := draws[drawn]
		drawn++
		return x
	}})
	require.Equal(t, 1, drawn, "drawn when built")
	require.Equal(t, 0.5, v.probeJitter)

	// Window 1 learns 10 ms. Windows up to 0.5*30*10 = 150 are app-limited at 20 ms: the
	// limit and the no-load latency stay.
	slow := window{meanLatency: 20 * ms}
	require.Equal(t, 10*time.Millisecond, v.next(window{meanLatency: 10 * ms}, Decision{}).LongLatency)
	for k := 2; k < 150; k++ {
		d := v.next(slow, Decision{})
		require.Equal(t, 10*time.Millisecond, d.LongLatency, "window %d", k)
		require.Equal(t, CauseAppLimited, d.Cause)
	}
	d := v.next(slow, Decision{})
	require.Equal(t, 20*time.Millisecond, d.LongLatency, "window 150 probes")
	require.NotEqual(t, CauseAppLimited, d.Cause)
	require.Equal(t, 10, d.LimitAfter, "a probe keeps the limit")
	require.Equal(t, 2, drawn, "a probe draws the next jitter")
	require.Equal(t, 0.75, v.probeJitter)
	require.Zero(t, v.probeCount)

	// The next probe is 0.75*30*10 = 225 windows later; zero-latency windows do not count.
	mid := window{meanLatency: 25 * ms}
	for k := 1; k < 225; k++ {
		v.next(window{}, Decision{})
		require.Equal(t, 20*time.Millisecond, v.next(mid, Decision{}).LongLatency, "window %d", k)
	}
	require.Equal(t, 30*time.Millisecond, v.next(window{meanLatency: 30 * ms}, Decision{}).LongLatency, "window 225 probes")
	require.Equal(t, 3, drawn)
}

// A limiter on a ManualClock with a seeded Random makes the same decisions every run.
func TestVegasDeterministic(t *testing.T) {
	run := func() []Decision {
		var ds []Decision
		l, clock := newManual(t, Config{
			Algorithm: Vegas, InitialLimit: 4, MaxLimit: 40, MinWindowSamples: 1, ProbeMultiplier: 1,
			Random:        rand.New(rand.NewPCG(1, 1)).Float64,
			OnLimitChange: func(_ string, d Decision) { ds = append(ds, d) },
		})
		r := rand.New(rand.NewPCG(2, 2))
		for range 300 {
			held := acquireN(t, l, l.Limit())
			clock.Advance(time.Duration(10+r.IntN(20)) * time.Millisecond)
			for p := range each(held) {
				p.Done(nil)
			}
		}
		return ds
	}
	first := run()
	require.NotEmpty(t, first)
	require.Equal(t, first, run())
}
