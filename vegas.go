package adaptivelimit

import (
	"math"
	"time"
)

// vegas is Netflix concurrency-limits' VegasLimit (v0.5.4), applied once a window
// (docs/algorithms.md, "Vegas"). It reads the queue against noLoad, the lowest latency seen,
// retaken every jitter*ProbeMultiplier*limit windows to follow a dependency that got slower.
type vegas struct {
	estimate    float64
	noLoad      int64 // nanoseconds; 0 until a window with a latency
	minLimit    int
	maxLimit    int
	smoothing   float64
	alpha, beta int // 0: 3 and 6 times log10root(limit)
	multiplier  float64
	probeCount  int // windows since the last probe
	probeJitter float64
	random      func() float64
}

func newVegas(c Config) *vegas {
	v := &vegas{
		estimate:   float64(c.InitialLimit),
		minLimit:   c.MinLimit,
		maxLimit:   c.MaxLimit,
		smoothing:  c.Smoothing,
		alpha:      c.Alpha,
		beta:       c.Beta,
		multiplier: float64(c.ProbeMultiplier),
		random:     c.Random,
	}
	v.resetProbeJitter()
	return v
}

// resetProbeJitter draws the jitter uniformly from [0.5, 1), as Java's nextDouble(0.5, 1)
// does, keeping it there whatever Random returns.
func (v *vegas) resetProbeJitter() {
	j := 0.5 + v.random()/2
	switch {
	case !(j >= 0.5): // NaN too
		j = 0.5
	case j >= 1: // 0.5 + r/2 rounds to 1 for r just below 1
		j = math.Nextafter(1, 0)
	}
	v.probeJitter = j
}

func (v *vegas) next(w window, d Decision) Decision {
	// Netflix's windows average whole nanoseconds, and it rejects a latency of 0 (a manual
	// clock, or calls faster than the clock's resolution): such a window changes nothing.
	rtt := int64(duration(w.meanLatency))
	if rtt <= 0 {
		return v.decided(d)
	}
	v.probeCount++
	if v.probeJitter*v.multiplier*v.estimate <= float64(v.probeCount) {
		v.resetProbeJitter()
		v.probeCount = 0
		v.noLoad = rtt
		return v.decided(d)
	}
	if v.noLoad == 0 || rtt < v.noLoad {
		v.noLoad = rtt
		return v.decided(d)
	}
	queue := saturate(math.Ceil(v.estimate*(1-float64(v.noLoad)/float64(rtt))), 0, math.MaxInt)

	var n float64
	switch {
	case w.drops > 0:
		n = v.estimate - float64(log10Root(v.limit()))
	case float64(w.maxInFlight)*2 < v.estimate:
		// With fewer than half the slots in use, latency says nothing about the limit.
		d.Cause = CauseAppLimited
		return v.decided(d)
	default:
		limit := v.limit()
		alpha, beta := v.alpha, v.beta
		if alpha == 0 {
			alpha, beta = 3*log10Root(limit), 6*log10Root(limit)
		}
		switch {
		case queue <= log10Root(limit):
			n = v.estimate + float64(beta)
		case queue < alpha:
			n = v.estimate + float64(log10Root(limit))
		case queue > beta:
			n = v.estimate - float64(log10Root(limit))
		default:
			return v.decided(d)
		}
	}
	// MinLimit stands where Netflix has 1.
	n = clamp(n, float64(v.minLimit), float64(v.maxLimit))
	v.estimate = (1-v.smoothing)*v.estimate + v.smoothing*n
	return v.decided(d)
}

// decided fills in what every window reports: the no-load latency as the long latency, and
// the limit. The smoothed estimate may lie an ulp below MinLimit; the limit never does.
func (v *vegas) decided(d Decision) Decision {
	d.LongLatency = v.longLatency()
	d.LimitAfter = v.limit()
	return d
}

func (v *vegas) limit() int { return saturate(v.estimate, v.minLimit, v.maxLimit) }

func (v *vegas) longLatency() time.Duration { return time.Duration(v.noLoad) }

// log10Root is Netflix's Log10RootIntFunction, max(1, floor(log10(n))), counted in digits:
// math.Log10 falls an ulp short of some powers of 10.
func log10Root(n int) int {
	r := 0
	for ; n >= 10; n /= 10 {
		r++
	}
	return max(1, r)
}
