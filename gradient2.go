package adaptivelimit

import (
	"math"
	"time"
)

// gradient2 is Netflix concurrency-limits' Gradient2Limit (v0.5.4), applied once a window
// (docs/algorithms.md, "Gradient2"): the window's latency, short, against an average, long.
type gradient2 struct {
	estimate  float64
	long      expAverage
	minLimit  int
	maxLimit  int
	smoothing float64
	tolerance float64
	queueSize float64
}

func newGradient2(c Config) *gradient2 {
	return &gradient2{
		estimate:  float64(c.InitialLimit),
		long:      expAverage{warmup: 10, factor: 2 / (float64(c.LongWindow) + 1)},
		minLimit:  c.MinLimit,
		maxLimit:  c.MaxLimit,
		smoothing: c.Smoothing,
		tolerance: c.RTTTolerance,
		queueSize: float64(c.QueueSize),
	}
}

func (g *gradient2) next(w window, d Decision) Decision {
	short := w.meanLatency
	long := g.long.add(short)
	d.LongLatency = duration(long)
	// Latency back to normal after a long overload: decay the average, for the limit to recover.
	if ratio(long, short) > 2 {
		g.long.scale(0.95)
	}
	// With fewer than half the slots in use, latency says nothing about the limit.
	if float64(w.maxInFlight) < g.estimate/2 {
		d.Cause = CauseAppLimited
		d.LimitAfter = g.limit()
		return d
	}
	gradient := clamp(g.tolerance*ratio(long, short), 0.5, 1)
	n := g.estimate*gradient + g.queueSize
	n = g.estimate*(1-g.smoothing) + n*g.smoothing
	if n == n { // NaN keeps the estimate: clamp would pass it on
		g.estimate = clamp(n, float64(g.minLimit), float64(g.maxLimit))
	}
	d.Gradient = gradient
	d.LimitAfter = g.limit()
	return d
}

func (g *gradient2) limit() int { return saturate(g.estimate, g.minLimit, g.maxLimit) }

// longLatency is the long-term average as it stands, decay included.
func (g *gradient2) longLatency() time.Duration { return duration(g.long.value) }

// ratio is long/short, defined where short is 0 (a manual clock, or calls faster than the
// clock's resolution): an instant window is no sign of queueing, and 0/0 is no change.
func ratio(long, short float64) float64 {
	switch {
	case short > 0:
		return long / short
	case long > 0:
		return math.Inf(1)
	}
	return 1
}

// expAverage is the plain mean of its first warmup values, then an exponential average.
type expAverage struct {
	value  float64
	sum    float64
	count  int
	warmup int
	factor float64
}

func (a *expAverage) add(v float64) float64 {
	if a.count < a.warmup {
		a.count++
		a.sum += v
		a.value = a.sum / float64(a.count)
	} else {
		a.value = a.value*(1-a.factor) + v*a.factor
	}
	return a.value
}

// scale multiplies the current value. During warmup the next add recomputes the plain
// mean, dropping the scaling, as Netflix's ExpAvgMeasurement does.
func (a *expAverage) scale(f float64) { a.value *= f }
