package adaptivelimit

import (
	"fmt"
	"math"
	"time"
)

// lossDelay is LossDelay, applied once a window. It reads two signals: the share of a
// window's calls that were dropped, and the window's mean latency against a baseline, the
// no-load latency. In order:
//
//   - A window whose drop share is above LossThreshold, or whose mean latency is above
//     LatencyCeiling, backs off from min(limit, maxInFlight) by BackoffRatio, or by the
//     latency's gradient where that is lower, and teaches the baseline nothing.
//   - A window with fewer than half the slots in use keeps the limit.
//   - A window whose latency is above DelayTolerance times the baseline shrinks the limit in
//     proportion (the gradient, at least 0.5) and does not grow it.
//   - Any other window grows the limit by IncreaseRatio, or doubles it while it regains the
//     limit it had before a streak of loss.
//
// The baseline is measured by a probe: a window at MinLimit when the limiter starts (a fleet
// that starts together measures it without its own queue), then every ProbeInterval windows,
// jittered, a window at half the limit. Between probes it only falls, with the latency of
// windows that are not congested; it rises only when RelearnAfter windows in a row were
// congested and cutting the limit did not bring the latency down: the dependency itself got
// slower, and the latency of the last window becomes the baseline.
type lossDelay struct {
	limit     float64
	minLimit  float64
	maxLimit  float64
	baseline  float64 // nanoseconds; 0 until the first probe has measured it
	threshold float64
	tolerance float64
	backoff   float64
	increase  float64
	ceiling   float64 // nanoseconds; 0 for none

	probeInterval int
	relearnAfter  int
	random        func() float64

	untilProbe   int     // windows until the next probe
	probing      int     // windows of the probe under way still to close: 2 (draining) or 1 (measuring)
	afterProbe   float64 // the limit to go back to when the probe ends
	regain       float64 // the limit before a streak of loss, regained by doubling; 0 for none
	stalled      int     // congested windows in a row in which the latency did not fall
	stallFrom    float64 // the latency of the first of them
	stallBefore  float64 // the limit before the first of them
	startLatency float64 // the first window's latency, judged once the first probe has measured the baseline
}

func newLossDelay(c Config) *lossDelay {
	return &lossDelay{
		limit:         float64(c.InitialLimit),
		minLimit:      float64(c.MinLimit),
		maxLimit:      float64(c.MaxLimit),
		threshold:     c.LossThreshold,
		tolerance:     c.DelayTolerance,
		backoff:       c.BackoffRatio,
		increase:      c.IncreaseRatio,
		ceiling:       float64(c.LatencyCeiling),
		probeInterval: c.ProbeInterval,
		relearnAfter:  c.RelearnAfter,
		random:        c.Random,
	}
}

func (a *lossDelay) next(w window, d Decision) Decision {
	mean := w.meanLatency
	lost := isLoss(w, a.threshold)
	capped := !lost && a.ceiling > 0 && mean > a.ceiling
	gradient := delayGradient(a.tolerance, a.baseline, mean)
	switch {
	case a.probing == 2:
		// The calls admitted before the probe finish in this window: its latency is theirs.
		d.Reason = ReasonProbe
		a.probing = 1
	case a.probing == 1:
		d.Reason = ReasonProbe
		a.endProbe(mean, lost || capped)
	case lost || capped:
		if a.baseline == 0 {
			a.startLatency = mean
		}
		d.Reason = ReasonLoss
		if capped {
			d.Reason = ReasonCeiling
		}
		if a.regain == 0 {
			a.regain = a.limit
		}
		a.stalled = 0
		a.limit = backOff(a.limit, w.maxInFlight, min(a.backoff, gradient, max(0.5, 1-lossShare(w))))
	case a.baseline == 0:
		// The first window: no baseline to judge latency by yet. Its latency is kept, to judge
		// it by once the probe has measured one.
		a.startLatency = mean
	case float64(w.maxInFlight) < a.limit/2:
		d.AppLimited = true
		d.Reason = ReasonHold
		a.learnLower(mean)
	case gradient < 1:
		d.Reason = ReasonGradient
		a.regain = 0
		if a.stall(mean) {
			d.Reason = ReasonRelearn
			a.baseline = max(mean, 1)
			a.limit = a.stallBefore
			break
		}
		a.limit *= gradient
	default:
		d.Reason = ReasonGrowth
		a.stalled = 0
		a.learnLower(mean)
		a.limit = grow(a.limit, a.increase, headroom(a.tolerance, a.baseline, mean), a.regain)
		if a.limit >= a.regain {
			a.regain = 0
		}
	}
	a.limit = clamp(a.limit, a.minLimit, a.maxLimit)
	if a.baseline == 0 && a.probing == 0 {
		// Right after the first window, loss or not, so that a fleet that starts together
		// probes together, without its own queue.
		a.startProbe(a.minLimit)
		d.Reason = ReasonProbe
	} else if a.probeInterval > 0 && a.probing == 0 && d.Reason != ReasonProbe && a.baseline > 0 {
		if a.untilProbe--; a.untilProbe <= 0 {
			a.startProbe(a.limit / 2)
			d.Reason = ReasonProbe
		}
	}
	if gradient < 1 {
		d.Gradient = gradient
	} else if a.baseline > 0 {
		d.Gradient = 1
	}
	d.LongLatency = duration(a.baseline)
	d.LimitAfter = saturate(a.limit, 1, math.MaxInt) // clamped above
	return d
}

// startProbe lowers the limit to at (at most the limit) for the next two windows, to measure
// the latency with little of this limiter's own queue in it: the first lets the calls
// admitted before it finish, the second measures.
func (a *lossDelay) startProbe(at float64) {
	a.probing = 2
	a.afterProbe = a.limit
	a.limit = max(a.minLimit, at)
}

// endProbe takes the probe window's latency as the baseline where it is lower (or the
// first), and goes back to the limit before the probe, less a backoff if the probe saw loss.
func (a *lossDelay) endProbe(mean float64, lost bool) {
	a.probing = 0
	a.limit = a.afterProbe
	a.untilProbe = jitteredInterval(a.probeInterval, a.random())
	if lost {
		a.limit *= a.backoff
		return
	}
	if a.baseline == 0 || mean < a.baseline {
		// At least a nanosecond: 0 means none yet, and calls faster than the clock's
		// resolution read as 0.
		a.baseline = max(mean, 1)
	}
	if a.startLatency > 0 && a.baseline > 0 {
		// The first probe: the first window ran at the initial limit, which may be far
		// beyond the dependency's capacity (a fleet starting at once); cut to the gradient
		// of its latency, unclamped, rather than halving window after window from there.
		a.limit *= min(1, a.tolerance*a.baseline/a.startLatency)
		a.startLatency = 0
		// Then double, as TCP's slow start does, until the first window of congestion or
		// loss: the initial limit is a guess, and may be far below the capacity too.
		a.regain = a.maxLimit
	}
}

// learnLower moves the baseline halfway down to an uncongested window's latency where that is
// lower: the baseline never learns a higher latency from a window.
func (a *lossDelay) learnLower(mean float64) {
	if mean < a.baseline {
		a.baseline += (max(mean, 1) - a.baseline) / 2
	}
}

// stall counts a congested window and reports whether the latency has stayed within a tenth
// of the first of RelearnAfter or more such windows in a row while they cut the limit to a
// quarter: a queue of this limiter's own making would have shrunk. A limit held at MinLimit
// is no such evidence: in a fleet, the others' calls keep the queue.
func (a *lossDelay) stall(mean float64) bool {
	if a.stalled == 0 || mean < 0.9*a.stallFrom {
		a.stalled, a.stallFrom, a.stallBefore = 0, mean, a.limit
	}
	a.stalled++
	if a.stalled < a.relearnAfter || a.limit > a.stallBefore/8 {
		return false
	}
	a.stalled = 0
	return true
}

func (a *lossDelay) longLatency() time.Duration { return duration(a.baseline) }

// minLossDrops is the fewest drops that make a window one of loss, whatever its share: in a
// window of a hundred calls, one or two timeouts are the tail of a healthy dependency as
// often as a sign of overload.
const minLossDrops = 3

// lossShare is the share of a window's samples that were drops.
func lossShare(w window) float64 {
	if w.samples == 0 {
		return 0
	}
	return float64(w.drops) / float64(w.samples)
}

// isLoss reports whether more than a share threshold of w's samples, and at least
// minLossDrops, were drops.
func isLoss(w window, threshold float64) bool {
	return w.drops >= minLossDrops && float64(w.drops) > threshold*float64(w.samples)
}

// delayGradient is tolerance*baseline/mean in [0.5, 1]: 1 while the latency is within
// tolerance of the baseline, or while there is no baseline yet.
func delayGradient(tolerance, baseline, mean float64) float64 {
	if baseline == 0 || mean <= tolerance*baseline {
		return 1
	}
	return clamp(tolerance*baseline/mean, 0.5, 1)
}

// backOff is the limit after a window of loss: the calls that really ran, times factor. A
// limit the window did not fill says nothing about what the dependency takes.
func backOff(limit float64, maxInFlight int, factor float64) float64 {
	return min(limit, float64(maxInFlight)) * factor
}

// headroom is how far below tolerance*baseline the latency is, from 1 (at the baseline or
// below) down to minHeadroom (at the tolerance): growth slows as the queue builds, so that
// the limit settles near the tolerance rather than overshooting it by a whole step, and
// never stops, since the baseline is an estimate.
func headroom(tolerance, baseline, mean float64) float64 {
	if tolerance == 1 {
		return 1
	}
	return clamp((tolerance-mean/baseline)/(tolerance-1), minHeadroom, 1)
}

const minHeadroom = 0.25

// grow is the limit after an uncongested window: doubled while below regain, without passing
// it; otherwise up by the share increase of the limit, or by one slot where that is more,
// scaled by the headroom. The slot is for small limits: a fleet of limiters with a few slots
// each grows by a slot a window, the same for all, and so converges to equal shares, as AIMD
// does; a share alone would keep their ratios, however unequal.
func grow(limit, increase, headroom, regain float64) float64 {
	if limit < regain {
		return min(2*limit, regain)
	}
	return limit + headroom*max(increase*limit, 1)
}

// jitteredInterval is interval scaled by a factor uniform in [0.5, 1) drawn from r, so that
// a fleet's limiters, started together, do not probe together; at least 1.
func jitteredInterval(interval int, r float64) int {
	return saturate(float64(interval)*(0.5+r/2), 1, max(1, interval))
}

// Reason says why a LossDelay window moved the limit, or kept it.
type Reason uint8

const (
	// ReasonNone: the window was not LossDelay's.
	ReasonNone Reason = iota
	// ReasonLoss: the window's drop share was above LossThreshold; the limit backed off.
	ReasonLoss
	// ReasonCeiling: the window's mean latency was above LatencyCeiling; the limit backed off.
	ReasonCeiling
	// ReasonGradient: latency above DelayTolerance times the baseline; the limit shrank in
	// proportion.
	ReasonGradient
	// ReasonGrowth: latency within tolerance and the slots in use; the limit grew.
	ReasonGrowth
	// ReasonHold: fewer than half the slots were in use; the limit stayed.
	ReasonHold
	// ReasonProbe: a probe of the no-load latency began (the limit lowered for a window) or
	// ended (the baseline measured, the limit restored).
	ReasonProbe
	// ReasonRelearn: cutting the limit did not bring latency down for RelearnAfter windows;
	// the baseline took the latency of the last, and the limit went back to before the cuts.
	ReasonRelearn
)

func (r Reason) String() string {
	switch r {
	case ReasonNone:
		return "none"
	case ReasonLoss:
		return "loss"
	case ReasonCeiling:
		return "ceiling"
	case ReasonGradient:
		return "gradient"
	case ReasonGrowth:
		return "growth"
	case ReasonHold:
		return "hold"
	case ReasonProbe:
		return "probe"
	case ReasonRelearn:
		return "relearn"
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}
