package adaptivelimit

import (
	"math"
	"time"
)

// lossDelay is LossDelay, applied once a window (docs/algorithms.md, "LossDelay"). It reads a
// window's drop share, and its mean latency against baseline, the no-load latency:
//
//   - loss (isLoss, sparseLoss) or a latency above LatencyCeiling backs off (backOff) and
//     teaches the baseline nothing; a window mostly of drops closes early (closesEarly);
//   - a window with fewer than half the slots in use keeps the limit;
//   - any other moves it by adjust: a cut for queueing, a growth by pace and room, or doubling.
//
// Probes confirm the first baseline where it may hold a queue (endProbe, endStartProbe; the
// tables of lossdelay_phase.go). No window without loss or congestion cuts the limit by more
// than half. Once confirmed, the baseline only falls (learnLower), or is relearned (stall).
type lossDelay struct {
	limit     float64
	minLimit  float64
	maxLimit  float64
	baseline  float64 // nanoseconds; 0 until the first window without loss
	phase     phase   // what the baseline is (lossdelay_phase.go)
	threshold float64
	tolerance float64
	backoff   float64
	increase  float64
	ceiling   float64 // nanoseconds; 0 for none

	probeInterval int
	relearnAfter  int
	random        func() float64

	window     float64 // nanoseconds: Config.Window
	minSamples uint64  // Config.MinWindowSamples

	untilProbe  int     // windows until the next periodic probe
	probeFrom   float64 // the latency of the window before the probe
	probeFromN  float64 // its samples
	reading     float64 // what the last probe read while the baseline is not confirmed
	readingN    float64 // from how many samples; 0 for none
	afterProbe  float64 // the limit to go back to when the probe ends, before any cut
	gatherLeft  int     // in phase gathering, the windows left to read the baseline from
	regain      float64 // the limit before a streak of loss, regained by doubling; 0 for none
	fromLoss    bool    // regain is the limit before a streak of loss, not the start's MaxLimit
	doubledFrom float64 // the limit before the window under way doubled it; 0 if it did not
	stalled     int     // congested windows in a row in which the latency did not fall
	stallFrom   float64 // the latency of the first of them
	stallBefore float64 // the limit before the first of them

	schedule // of the windows (lossdelay_phase.go)
}

func newLossDelay(c Config) *lossDelay {
	return &lossDelay{
		limit:         float64(c.InitialLimit),
		minLimit:      subUnitFloor(c),
		maxLimit:      float64(c.MaxLimit),
		threshold:     c.LossThreshold,
		tolerance:     c.DelayTolerance,
		backoff:       c.BackoffRatio,
		increase:      c.IncreaseRatio,
		ceiling:       float64(c.LatencyCeiling),
		probeInterval: c.ProbeInterval,
		relearnAfter:  c.RelearnAfter,
		random:        c.Random,
		window:        float64(c.Window),
		minSamples:    uint64(c.MinWindowSamples),
	}
}

// subUnitFloor is the lowest limit of c: SubUnitFloor where it is set below 1 (New allows it
// only with MinLimit 1), else MinLimit.
func subUnitFloor(c Config) float64 {
	if c.SubUnitFloor > 0 && c.SubUnitFloor < 1 {
		return c.SubUnitFloor
	}
	return float64(c.MinLimit)
}

func (a *lossDelay) next(w window, d Decision) Decision {
	mean := w.meanLatency
	probing, early := a.step >= draining, a.step == closedEarly
	flooded := early && a.phase == starting // judged: see leaveOut
	a.step = a.step.after(a.confirmed())
	doubledFrom := a.doubledFrom
	a.doubledFrom = 0
	lost := isLoss(w, a.threshold) || a.sparseLoss(w)
	capped := !lost && a.ceiling > 0 && mean > a.ceiling
	gradient := lossGradient(a.tolerance, a.baseline, mean)
	before := saturate(a.limit, 1, math.MaxInt)
	switch {
	case probing:
		d.Cause = CauseProbe
		if w.samples < a.minSamples && !lost && !capped {
			// Out of time, short of samples: no reading; the next window probes again if it must.
			a.limit = a.afterProbe
			break
		}
		a.endProbe(mean, w.samples, lost || capped)
	case lost || capped:
		d.Cause = CauseDrop
		if capped {
			d.Cause = CauseCeiling
		}
		switch {
		case doubledFrom > 0:
			a.regain, a.fromLoss = doubledFrom, true // the slow start ends here (adjust)
		case a.regain == 0 && a.confirmed():
			a.regain, a.fromLoss = a.limit, true
		}
		a.lose()
		inFlight := w.maxInFlight
		if early && !(a.subUnit() && a.baseline == 0) {
			// The calls finished so far may have started before the rest: the limit is what
			// ran (before a baseline with limits below 1 on: see Limits below 1, below).
			inFlight = saturate(max(a.limit, 1), 0, math.MaxInt)
		}
		factor := min(a.backoff, gradient, max(a.deepest(), 1-lossShare(w)))
		if a.sparse(w) {
			factor = min(factor, max(deepestSubUnit, math.Pow(dropCut, float64(w.drops))))
		}
		a.limit = backOff(a.limit, inFlight, factor)
		if a.limit < 1 {
			a.limit = max(a.limit, min(1, a.lossRegain()/streakDepth))
		}
	case a.phase <= startingLost:
		// The first window without loss: the no-load latency plus any queue, which only a
		// window that filled its limit, or followed loss, may hold: a probe judges it (learn).
		d.Cause = CauseSteady
		if float64(w.maxInFlight) < a.limit/2 {
			d.Cause = CauseAppLimited
		}
		a.baseline = max(mean, 1)
		a.learn(w.maxInFlight < int(a.limit))
		a.regain, a.fromLoss = a.maxLimit, false // slow start, once the baseline is confirmed
	case a.phase == gathering:
		d.Cause = CauseSteady
		a.gathered(mean)
	case float64(w.maxInFlight) < a.limit/2:
		d.Cause = CauseAppLimited
		a.learnLower(mean)
	case a.limit < 1 && a.limit < a.lossRegain():
		// Paced, after a streak of loss: its few calls say only that the dependency is back.
		// It regains up to 1 at once, and doubles from there (adjust).
		d.Cause = CauseGrowth
		a.doubledFrom = a.limit
		a.limit = min(1, a.lossRegain())
	default:
		a.adjust(w, &d, a.span(w))
	}
	a.limit = clamp(a.limit, a.minLimit, a.maxLimit)
	// Named by the way the limit moved: the pace may outgrow the cut, or the cut the pace.
	switch after := saturate(a.limit, 1, math.MaxInt); {
	case d.Cause == CauseLatency && after > before:
		d.Cause = CauseGrowth
	case d.Cause == CauseGrowth && after < before:
		d.Cause = CauseLatency
	}
	if d.Cause != CauseProbe && a.probes() {
		a.startProbe(mean, w.samples)
		d.Cause = CauseProbe
	}
	if d.Gradient == 0 && a.confirmed() {
		d.Gradient = queueGradient(a.baseline, mean)
	}
	a.leaveOut = flooded && a.limit < 1
	d.LongLatency = a.longLatency()
	d.LimitAfter = saturate(a.limit, 1, math.MaxInt) // clamped above
	d.ExactLimit = a.limit
	return d
}

// adjust moves the limit after a window that filled it without loss: cut by the latency's
// share queueing beyond half the tolerance (queueGradient), grown by pace and room, for span
// windows. Below the tolerance it doubles instead up to regain: the limit before a streak of
// loss, or after the start MaxLimit until congestion or loss; a window that doubled into loss
// leaves the limit before it to regain (next), as TCP's slow start ends.
func (a *lossDelay) adjust(w window, d *Decision, span float64) {
	mean := w.meanLatency
	if mean > a.tolerance*a.baseline {
		d.Cause = CauseLatency
		a.regain = 0
		if a.stall(mean) {
			d.Cause = CauseRelearn
			a.baseline = max(mean, 1)
			a.limit = a.stallBefore
			return
		}
	} else {
		d.Cause = CauseGrowth
		a.stalled = 0
		a.learnLower(mean)
		if !a.confirmed() && a.limit >= 1 {
			// Unconfirmed, the baseline is an upper bound: no sign of room; this window's probe
			// reads it again. Below 1 it grows: probes read too few calls; the queue is a fleet's.
			d.Cause = CauseSteady
			return
		}
		if a.limit < a.regain {
			a.doubledFrom = a.limit
			a.limit = min(2*a.limit, a.regain)
			return
		}
		a.regain = 0
	}
	gradient := queueGradient(a.baseline*(1+a.tolerance)/2, mean)
	d.Gradient = gradient
	if span != 1 {
		gradient = math.Pow(gradient, span)
	}
	a.limit = a.limit*gradient + span*(pace(a.tolerance, a.limit)+a.increase*a.limit*room(a.tolerance, a.baseline, mean))
}

// Limits below 1 (Config.SubUnitFloor; paced: pace.go), as docs/algorithms.md describes in
// "Limits below one call in flight":
//
//   - A window of loss below 1 or before the first baseline cuts to deepestSubUnit at most
//     (deepest); before the baseline, from the calls in flight also where it closed early,
//     since the limit, much higher, never ran (next).
//   - A streak of loss takes the limit no lower than 1/streakDepth of the one before it; the
//     first window without loss takes it back to 1, to double from there (next, lossRegain).
//   - Below 1 the pace is in proportion to the limit (pace).
//   - A sparse window is judged by its drops, dropCut each (sparse), and one of fewer than
//     minLossDrops*MinWindowSamples samples is one of loss at its first drop (sparseLoss).
//   - A paced window grows and is cut for the windows it stood for (span), and waits for its
//     samples pacedWindows windows at most, jittered (nextEnd).
//   - Until a baseline is confirmed, a window closes early at minLossDrops drops (dropped,
//     closesEarly); where that takes the limit below 1, the calls in flight at the close are
//     left out of the next window (judged).
//   - Relearning and confirming a baseline need a limit of 1 or more (stall, adjust): a paced
//     limiter holds one call, the queue it sees is the fleet's, and its probes read too few.
//
// With SubUnitFloor 1 (minLimit 1 or more), none of this applies.

// deepestSubUnit is the deepest cut of a window of loss below 1 or before the first baseline.
const deepestSubUnit = 1.0 / 8

// streakDepth is how many times below the limit before a streak of loss the streak may take
// a limit below 1.
const streakDepth = 64

// dropCut is what each drop of a sparse window cuts the limit by: a fleet of 1000 times out
// 1.6-1.9% of its calls at 0.4, 1.9-2.3% at 0.5, over the 2% aimed at (seeds 1-6, with judged).
const dropCut = 0.4

// sparse reports whether w has too few calls to read a share of drops from.
func (a *lossDelay) sparse(w window) bool {
	return a.subUnit() && (a.limit < 1 || w.samples < a.minSamples)
}

// sparseLoss reports whether w is too small to wait for minLossDrops drops: its first is loss.
func (a *lossDelay) sparseLoss(w window) bool {
	return a.subUnit() && w.drops > 0 && w.samples < minLossDrops*a.minSamples
}

// span is how many windows' time w stood for: a paced window's length in windows, at most
// pacedWindows, and no more than its samples where it stopped waiting for them (nextEnd): its
// growth is for the calls that say there is room.
func (a *lossDelay) span(w window) float64 {
	if a.limit >= 1 || w.length <= a.window {
		return 1
	}
	span := min(w.length/a.window, pacedWindows)
	if w.samples < a.minSamples {
		span = max(1, min(span, float64(w.samples)))
	}
	return span
}

// subUnit reports whether the limit may go below 1.
func (a *lossDelay) subUnit() bool { return a.minLimit < 1 }

// deepest is the lowest factor a window of loss cuts the limit by.
func (a *lossDelay) deepest() float64 {
	if a.subUnit() && (a.limit < 1 || a.baseline == 0) {
		return deepestSubUnit
	}
	return 0.5
}

// lossRegain is regain where it is the limit before a streak of loss, else 0.
func (a *lossDelay) lossRegain() float64 {
	if !a.fromLoss {
		return 0
	}
	return a.regain
}

// pace is what a limit grows by in a window: at paceLimit, 1-1/tolerance of itself, the share
// that may queue at the tolerance; elsewhere as limit^paceExponent, so that larger limits settle
// with less queueing. Near 0 the exponent makes a large fleet of small limits queue more; near 1
// baselines a percent apart set the shares apart. Below 1, in proportion (Limits below 1).
func pace(tolerance, limit float64) float64 {
	if limit < 1 {
		return pace(tolerance, 1) * limit
	}
	return (1 - 1/tolerance) * paceLimit * math.Pow(limit/paceLimit, paceExponent)
}

const (
	paceLimit    = 7
	paceExponent = 0.3
)

// room is 1 while latency is at the baseline or below, falling to 0 halfway to the tolerance.
func room(tolerance, baseline, mean float64) float64 {
	half := (tolerance - 1) / 2
	if half == 0 {
		return 0
	}
	return clamp((1+half-mean/baseline)/half, 0, 1)
}

// queueGradient is baseline/mean in [0.5, 1]: the share of the latency that is not queueing.
func queueGradient(baseline, mean float64) float64 {
	if baseline == 0 || mean <= baseline {
		return 1
	}
	return clamp(baseline/mean, 0.5, 1)
}

// startProbe halves the limit, to read the latency without half this limiter's calls (and a
// fleet's, started together); from and samples are the window before's.
func (a *lossDelay) startProbe(from float64, samples uint64) {
	a.step = draining
	a.probeFrom, a.probeFromN = from, float64(samples)
	a.afterProbe = a.limit
	a.limit = half(a.minLimit, a.limit)
}

// probeShare is the most of a window a probe runs (drainTime, then measureTime), whatever its
// samples, as BBR's ProbeRTT runs about 200 ms.
const probeShare = 0.2

// drainTime is how long a probe waits for the calls admitted before it to finish.
func (a *lossDelay) drainTime() time.Duration {
	return duration(min(2*a.probeFrom, a.window*probeShare/2))
}

// measureTime is how long a drained probe measures: the time its slots take for probeSamples
// calls, or MinWindowSamples or two a slot where more, at the latency before it (an upper bound
// on its own). After a start in loss, all of measureMost, so that a fleet's probes stay together.
func (a *lossDelay) measureTime() time.Duration {
	if a.phase == learningLost {
		return duration(a.measureMost())
	}
	calls := max(float64(a.minSamples), probeSamples, 2*a.limit)
	return duration(min(calls/a.limit*a.probeFrom, a.measureMost()))
}

// probeSamples is how many samples a probe reads, time allowing: at a lognormal's sigma 0.4
// their mean is within 4% of the latency, so a fall of a tenth is not noise.
const probeSamples = 100

// measureMost is the longest a probe measures, waiting for MinWindowSamples samples.
func (a *lossDelay) measureMost() float64 {
	return a.window*probeShare - float64(a.drainTime())
}

// half is half of limit, at least min, rounded up: the published limit keeps at least half.
func half(min, limit float64) float64 {
	if limit < 1 {
		return max(min, limit/2)
	}
	return max(min, math.Ceil(math.Floor(limit)/2))
}

// endProbe ends a probe: the limit comes back at once, times BackoffRatio where it saw loss.
// Until the baseline is confirmed (docs/algorithms.md, "A probe is short"), a probe that fell
// found a queue in the window before: the limit comes back cut by the gradient, with no slow
// start. One that did not reads the no-load latency with the window before; it confirms it
// where a first reading is within oneReading of that window, else within a tenth of the probe
// before (a fleet's queue may be in a first reading). After a start in loss, endStartProbe
// decides. Once confirmed, the baseline takes a lower reading.
func (a *lossDelay) endProbe(mean float64, samples uint64, lost bool) {
	a.limit = a.afterProbe
	if lost {
		a.limit *= a.backoff
		return
	}
	read, n := mean, float64(samples)
	ratio := max(mean, 1) / max(a.probeFrom, 1) // latencies of 0 read as the 1 ns a baseline is at least
	if a.phase == learningLost {
		a.endStartProbe(mean, ratio)
		return
	}
	// Beyond noise: 2 standard errors of n samples whose deviation is half their mean, and 1/20.
	fell := ratio < 1-max(0.05, 1/math.Sqrt(n))
	if !fell {
		read = (mean*n + a.probeFrom*a.probeFromN) / (n + a.probeFromN)
		n += a.probeFromN
	}
	switch {
	case a.confirmed():
		a.baseline = min(a.baseline, max(read, 1))
		a.confirm()
	case fell:
		a.limit *= clamp(a.tolerance*ratio, 0.5, 1)
		a.regain = 0
		a.baseline = max(read, 1)
		a.reading, a.readingN = read, n
	case a.readingN == 0 && math.Abs(ratio-1) <= oneReading:
		a.baseline = max(read, 1)
		a.confirm()
		if a.limit < a.regain {
			// The slow start the window before, full at the baseline, would have begun.
			a.doubledFrom = a.limit
			a.limit = min(2*a.limit, a.regain)
		}
	case a.readingN > 0 && read >= 0.9*a.reading:
		a.baseline = max((read*n+a.reading*a.readingN)/(n+a.readingN), 1)
		a.reading, a.readingN = 0, 0
		a.confirm()
	default:
		a.baseline = max(read, 1)
		a.reading, a.readingN = read, n
	}
}

// endStartProbe ends a probe after a start in loss, most likely a fleet's, whose probes run
// together (measureTime) and halve the fleet's calls. Where the latency fell under stillQueued
// of the window before's, the fleet still queues: the limit stays halved. Otherwise it comes
// back at the share of the calls that did not queue, times startShare, and gather reads the
// baseline from whole windows (docs/algorithms.md, "A client whose first windows lost calls").
func (a *lossDelay) endStartProbe(mean, ratio float64) {
	if ratio < stillQueued {
		a.baseline = min(a.baseline, max(mean, 1))
		a.limit = half(a.minLimit, a.afterProbe)
		return
	}
	a.limit = a.afterProbe * min(1, ratio*startShare)
	a.gather()
}

// gathered takes a window's latency, an upper bound, into the baseline after a start in loss;
// the last confirms it, with no slow start: the capacity is the fleet's.
func (a *lossDelay) gathered(mean float64) {
	if a.gatherLeft == startWindows {
		a.baseline = max(mean, 1)
	}
	a.baseline = min(a.baseline, max(mean, 1))
	if a.gatherLeft--; a.gatherLeft == 0 {
		a.regain = 0
		a.confirm()
	}
}

const (
	// stillQueued is the fall of the latency under which half a fleet's calls still queue: at
	// or above the capacity the latency falls with the calls, below it to the no-load latency,
	// and a fall under 1/(2*0.85) leaves half the calls at 85% of the capacity or more.
	stillQueued = 1 / 1.7
	// startShare is the share of the calls that did not queue that the limit keeps: below the
	// capacity.
	startShare = 0.95
	// startWindows is how many windows the first baseline after a start in loss is read from.
	startWindows = 3
)

// oneReading is how near the window before's a first probe must read to confirm the baseline
// alone, so that a client alone in front of its dependency probes once.
const oneReading = 0.05

// learnLower moves the baseline halfway down to a lower latency; it never learns a higher one.
func (a *lossDelay) learnLower(mean float64) {
	if mean < a.baseline {
		a.baseline += (max(mean, 1) - a.baseline) / 2
	}
}

// stall counts a congested window, and reports whether RelearnAfter or more in a row cut the
// limit to an eighth with the latency within a tenth of the first's: a queue of this limiter's
// own would have shrunk. A limit at MinLimit or below 1 is no evidence (the fleet's calls keep
// the queue); windows of loss keep the run (the shift scenario: 37% of the capacity if not).
func (a *lossDelay) stall(mean float64) bool {
	if a.stalled == 0 || mean < 0.9*a.stallFrom {
		a.stalled, a.stallFrom, a.stallBefore = 0, mean, a.limit
	}
	a.stalled++
	if a.stalled < a.relearnAfter || a.limit > a.stallBefore/8 || a.limit < 1 {
		return false
	}
	a.stalled = 0
	return true
}

// longLatency is the baseline once confirmed: before, it is only an upper bound on it.
func (a *lossDelay) longLatency() time.Duration {
	if !a.confirmed() {
		return 0
	}
	return duration(a.baseline)
}

// minLossDrops is the fewest drops that make a window one of loss: one or two timeouts in a
// hundred calls are a healthy dependency's tail as often as overload.
const minLossDrops = 3

// lossShare is the share of a window's samples that were drops.
func lossShare(w window) float64 {
	if w.samples == 0 {
		return 0
	}
	return float64(w.drops) / float64(w.samples)
}

// isLoss reports whether more than threshold of w's samples, and minLossDrops, were drops.
func isLoss(w window, threshold float64) bool {
	return w.drops >= minLossDrops && float64(w.drops) > threshold*float64(w.samples)
}

// lossGradient is tolerance*baseline/mean in [0.5, 1]; 1 within tolerance or with no baseline.
func lossGradient(tolerance, baseline, mean float64) float64 {
	if baseline == 0 || mean <= tolerance*baseline {
		return 1
	}
	return clamp(tolerance*baseline/mean, 0.5, 1)
}

// backOff is the limit after a window of loss: the calls that ran, times factor (a limit not
// filled says nothing of what the dependency takes).
func backOff(limit float64, maxInFlight int, factor float64) float64 {
	return min(limit, float64(maxInFlight)) * factor
}

// jitteredInterval is interval scaled by a factor uniform in [0.5, 1) drawn from r, so that
// a fleet's limiters, started together, do not probe together; at least 1.
func jitteredInterval(interval int, r float64) int {
	return saturate(float64(interval)*(0.5+r/2), 1, max(1, interval))
}
