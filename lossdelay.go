package adaptivelimit

import (
	"math"
	"time"
)

// lossDelay is LossDelay, applied once a window. It reads two signals: the share of a
// window's calls that were dropped, and the window's mean latency against a baseline, the
// no-load latency. In order:
//
//   - A window whose drop share is above LossThreshold, or whose mean latency is above
//     LatencyCeiling, backs off from min(limit, maxInFlight) by BackoffRatio, or by the
//     latency's gradient or the share that got through where either is lower, and teaches
//     the baseline nothing. A window in which most of the calls that started in it, at
//     least MinWindowSamples, were dropped closes at once (window.go), before its end.
//   - A window with fewer than half the slots in use keeps the limit.
//   - Any other window loses the share of its latency that queues beyond half the
//     tolerance, and grows by a pace less than in proportion to the limit (adjust), and by
//     IncreaseRatio while the latency is at the baseline; below the tolerance it doubles
//     instead while it regains the limit it had before a streak of loss, or after the start.
//     A window that doubled the limit into loss leaves the limit before it to regain.
//
// The first window without loss gives the baseline: its latency is at most the no-load
// latency plus the queue. Where that window filled its limit, the queue may be its own, or a
// fleet's that started together: a probe judges it. A probe is short: half the limit for a
// fifth of a window at most, and the limit back at once (startProbe). Until the probes confirm
// the baseline (endProbe: one for a limiter alone, two that agree otherwise), every window
// ends with one, and the limit holds between them, or comes back cut where halving brought
// the latency down. A limiter that lost calls before its first baseline, most likely one of a
// fleet started together beyond the capacity, halves its limit while its probes say the fleet
// still queues, then reads the baseline from whole windows below the capacity
// (endStartProbe). The tables of phase and step (lossdelay_phase.go) sum this up.
// The limit is never cut by more than half in a window without loss or congestion. With
// ProbeInterval, a probe every so many windows, jittered, probes again. Between probes the baseline only falls, with the latency of windows
// that are not congested; it rises only when RelearnAfter windows in a row were congested and
// cutting the limit did not bring the latency down: the dependency itself got slower, and the
// latency of the last window becomes the baseline.
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
			// The probe ran the most it may without the samples to read a latency: the
			// limit comes back, and the next window probes again if it must.
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
			// The calls that have finished so far may have started before the others; the
			// limit is what ran. (Below 1, before a baseline: see deepest.)
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
		// The first window without loss: the latency of the calls at this limit, no more than
		// the no-load latency plus the queue. A window that did not fill its limit queued
		// nothing of its own; one that did may have, and so may a fleet that lost calls before,
		// and a probe judges it.
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
		// A paced limiter back from a streak of loss: a window without loss is all that its
		// few calls say of a dependency back from an incident. It regains up to 1 at once,
		// and doubles from there (adjust).
		d.Cause = CauseGrowth
		a.doubledFrom = a.limit
		a.limit = min(1, a.lossRegain())
	default:
		a.adjust(w, &d, a.span(w))
	}
	a.limit = clamp(a.limit, a.minLimit, a.maxLimit)
	// A window above the tolerance in which the pace outgrew the cut grew the limit; one
	// below it in which the cut outweighed the pace lowered it for its latency.
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

// adjust moves the limit after a window that filled it without loss. The limit is cut by
// the share of the latency that is queueing, baseline/latency, and grows by a pace that
// rises as the square root of the limit:
//
//	limit' = limit * clamp(baseline/latency, 0.5, 1) + pace*sqrt(limit) + room
//
// A limit settles where the two balance, with latency a little above the baseline: the
// larger the limit, the nearer. In a fleet the clients see the same latency, and those that
// hold more slots lose more of them to it while they grow by less than their share: the
// limits converge to equal shares, as AIMD's do, rather than keep their ratios. A growth in
// proportion to the limit, as TCP's, would keep them; and a rule that only grows below a
// threshold of latency and only shrinks above it lets the client with the highest baseline,
// measured a percent higher by chance, take the servers while the others starve. room is
// IncreaseRatio of the limit while the latency is at the baseline, down to nothing halfway
// to the tolerance: there is no queue, so the capacity is above the limit. Below the
// tolerance the limit doubles instead while it regains the limit it had before a streak of
// loss, or, after the start, until the first window above the tolerance or of loss. As TCP's
// slow start ends at a loss with half the window that lost, what is left to regain after a
// window that doubled the limit into loss is the limit before it: not the one that lost
// calls, nor the start's MaxLimit.
//
// span is how many windows' time the window stood for (span): the cut by the gradient and the
// growth are for that many windows.
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
			// The baseline is only an upper bound on the no-load latency: a latency within
			// tolerance of it says nothing of room to grow, and the probe that ends this
			// window reads it again. Below 1 a probe reads too few calls to confirm it,
			// and the limiter holds one call at most: the latency is the dependency's.
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

// Limits below 1 (Config.SubUnitFloor; the calls are paced: pace.go).
//
//   - A window of loss cuts a limit below 1, or one before the first baseline, by up to
//     deepestSubUnit rather than half: a fleet of N clients started at InitialLimit holds
//     N times it, and must come down to the capacity's share, maybe 1/N, in a few windows of
//     loss, each of which times out a client's MinWindowSamples calls. Before the first
//     baseline it cuts from the calls in flight also where the window closed early: the
//     limit, much higher, never ran.
//   - A streak of loss takes the limit no lower than streakDepth times below the limit
//     before it, where that was 1 or more: a dependency that served that limit to this
//     client alone is more likely down than suddenly shared by so many more clients, and
//     a paced limiter far below 1 would take many windows to find it back. The first window
//     without loss after it takes the limit back to 1 at once (or to the limit before, where
//     lower), and the slow start doubles it from there.
//   - Below 1 the pace is in proportion to the limit (pace): a fleet of N at limits about
//     the capacity over N grows by N times the pace, which a pace that fell less than the
//     limit would make many times the capacity.
//   - A paced window, or one of fewer than MinWindowSamples samples, is judged by its drops,
//     not their share: each cuts the limit to dropCut of it (sparse). A window of fewer than
//     minLossDrops*MinWindowSamples samples is one of loss at its first drop (sparseLoss):
//     a client of a fleet of 1000 sends a few calls a window, and timeouts that are a few
//     percent of the fleet's calls are one or two of its own, never the three that make a
//     larger window one of loss.
//   - A paced limiter's window waits for MinWindowSamples samples, so that it lasts the
//     longer the fewer calls the limiter sends; it grows, and is cut by the latency's
//     gradient, for as many windows as it lasted (span). The limits of a fleet then grow
//     alike per second, while each limiter's drops, as many as its calls, cut it: the limits
//     converge to equal shares. Grown by the window, the limiters that send the fewest calls
//     would grow the slowest, and keep the least.
//   - It waits pacedWindows windows at most, jittered, and then closes with the samples it
//     has, one at least, for no more windows than it has samples (nextEnd, span): a client of
//     a fleet of 10,000 sends a call a second, and its windows would last 10 s or more,
//     decide once in that time, and, started together, decide together.
//   - Until it has confirmed a baseline once, a window that has run a quarter of its length
//     closes early at minLossDrops drops that are a majority, whatever its samples
//     (lossdelay_phase.go, dropped): a fleet of 1000 clients started together at
//     InitialLimit floods its dependency, and waiting for MinWindowSamples drops, a second
//     of each client's calls, times out a second of the fleet's. A limiter whose calls have
//     MinWindowSamples drops within the quarter closes at those, as before. Where that close
//     takes the limit below 1, it judged the calls still in flight at it too, admitted at
//     InitialLimit: their drops are left out of the window after it (judged).
//   - A relearned baseline needs a limit of 1 or more (stall), and so does a baseline
//     confirmed before the limit grows (adjust): a paced limiter holds one call at most,
//     the queue it sees is the fleet's, and a probe reads too few of its calls.
//
// With SubUnitFloor 1 (minLimit 1 or more), none of this applies: LossDelay is as before.

// deepestSubUnit is the deepest cut of a window of loss below 1 or before the first baseline.
const deepestSubUnit = 1.0 / 8

// streakDepth is how far below the limit before a streak of loss the streak takes a limit
// below 1.
const streakDepth = 64

// dropCut is the factor that each drop of a sparse window cuts the limit by. Cut to 0.4 at
// each, a fleet of 1000 times out 1.6-1.9% of its calls (seeds 1-6); halved, 1.9-2.3%, over
// the 2% aimed at, since the start's drops are left out (judged).
const dropCut = 0.4

// sparse reports whether w has too few calls to read a share of drops from: a paced limiter's,
// or one of fewer than MinWindowSamples samples, where the limit may go below 1.
func (a *lossDelay) sparse(w window) bool {
	return a.subUnit() && (a.limit < 1 || w.samples < a.minSamples)
}

// sparseLoss reports whether w, where the limit may go below 1, is one of loss for its first
// drop: it has fewer samples than minLossDrops times MinWindowSamples.
func (a *lossDelay) sparseLoss(w window) bool {
	return a.subUnit() && w.drops > 0 && w.samples < minLossDrops*a.minSamples
}

// span is how many windows' time w stood for: its length in windows for a paced limiter, at
// most pacedWindows, whose windows wait for their samples; 1 otherwise. A window that stopped
// waiting (nextEnd) stands for no more windows than it has samples: its growth is for the
// calls that say there is room.
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

// deepest is the deepest cut of a window of loss: half, or deepestSubUnit below 1 or before
// the first baseline.
func (a *lossDelay) deepest() float64 {
	if a.subUnit() && (a.limit < 1 || a.baseline == 0) {
		return deepestSubUnit
	}
	return 0.5
}

// lossRegain is the limit before a streak of loss, which the limit regains; 0 for none, and
// for the slow start's MaxLimit.
func (a *lossDelay) lossRegain() float64 {
	if !a.fromLoss {
		return 0
	}
	return a.regain
}

// pace is what a limit grows by in a window: a limit of paceLimit by the share 1-1/tolerance
// of itself, the share of the latency that may be queueing at the tolerance; a larger limit by
// its size to the power paceExponent, less than in proportion, so that it settles with less
// queueing, and a smaller one by more, so that it settles with more. The exponent trades
// the two: near 0 a fleet of many small limits queues the more the larger the fleet; near 1
// growth is a share of the limit again, and baselines a percent apart set the shares apart.
// Below 1 it is in proportion to the limit, as at 1 (see deepestSubUnit).
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

// startProbe halves the limit, to measure the latency with half of this limiter's calls, and
// a fleet's queue if it started together, out of it; from is the latency of the window
// before, and samples its samples.
func (a *lossDelay) startProbe(from float64, samples uint64) {
	a.step = draining
	a.probeFrom, a.probeFromN = from, float64(samples)
	a.afterProbe = a.limit
	a.limit = half(a.minLimit, a.limit)
}

// A probe is short: it waits at half the limit for the calls admitted before it to finish,
// then measures the latency of the calls admitted at half the limit until it has the samples
// to read it, and the limit comes back. It runs at most probeShare of a window, whatever
// its samples, as BBR's ProbeRTT runs about 200 ms.
const probeShare = 0.2

// drainTime is how long a probe waits for the calls admitted before it: twice the latency
// they queued at, at most half the probe.
func (a *lossDelay) drainTime() time.Duration {
	return duration(min(2*a.probeFrom, a.window*probeShare/2))
}

// measureTime is how long a probe measures once drained, unless it lacks MinWindowSamples
// samples: the time its slots take to answer probeSamples calls, or MinWindowSamples where
// more, and each slot twice, at the latency before the probe, an upper bound on the probe's;
// at most the rest of the probe. After a start in loss it is the rest of the probe, so that
// the probes of a fleet started together, of one length, stay together.
func (a *lossDelay) measureTime() time.Duration {
	if a.phase == learningLost {
		return duration(a.measureMost())
	}
	calls := max(float64(a.minSamples), probeSamples, 2*a.limit)
	return duration(min(calls/a.limit*a.probeFrom, a.measureMost()))
}

// probeSamples is how many samples a probe reads the latency from, where it has the time:
// with service times as spread as a lognormal's of sigma 0.4, their mean is within 4% of the
// latency, so that a fall of a tenth is not noise.
const probeSamples = 100

// measureMost is the longest a probe measures, waiting for MinWindowSamples samples.
func (a *lossDelay) measureMost() float64 {
	return a.window*probeShare - float64(a.drainTime())
}

// half is half of limit, rounded up, so that the published limit is never below half the one
// before: at least min. Below 1, where min is, it is half the limit.
func half(min, limit float64) float64 {
	if limit < 1 {
		return max(min, limit/2)
	}
	return max(min, math.Ceil(math.Floor(limit)/2))
}

// endProbe ends a probe: the limit comes back at once, less a backoff if the probe saw loss.
// Where halving brought the latency down, the window before queued calls of its own: before
// the baseline is confirmed, the limit is then cut by the latency's gradient, at most by
// half, and with DelayTolerance's allowance where it fell by a tenth or more. Where halving
// did not bring the latency down by a twentieth, the window before queued nothing of its own
// worth the name, and the two read the no-load latency: together, more precisely than the
// probe's samples alone.
//
// Before the baseline is confirmed, every window ends with a probe, and the baseline is what
// the last one read, until one that does not fall reads within a tenth of the one before: the
// two, together, are the baseline. A fleet's queue, which one limiter's halving does not
// empty, may be in the first reading. A limiter that did not start in loss needs one probe
// where it reads within oneReading of the window before: neither held a queue; one whose probe
// fell had a queue in the window before, its own or a fleet's, at or above the capacity, and
// begins no slow start. (One that started in loss reads its first baseline in endStartProbe.)
// Once confirmed, the baseline takes what a probe reads where it is lower.
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
	// A fall counts where it is beyond what a mean of n samples varies by: twice its standard
	// error where the latencies' standard deviation is half their mean, and a twentieth.
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
			// The window before filled its limit at the baseline: the slow start it
			// would have begun with its baseline known.
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

// endStartProbe ends a probe of a limiter that lost calls before its first baseline: most
// likely one of a fleet started together beyond the dependency's capacity, whose windows and
// probes run together (window.go, measureTime), so that its probes halve the fleet's calls,
// not one client's. Where the latency fell by about as much as the calls, to under
// stillQueued of the window before's, the fleet still queued with half of them: the limit
// stays halved, at 85% of the capacity or more, and the next window probes again. Otherwise
// half the calls ran below the capacity, and the latency fell to the no-load latency: the
// limit comes back at the share of the calls that did not queue (Little's law), less a
// twentieth, below the capacity, and the baseline is the lowest latency of the next
// startWindows windows (gather). A probe's 20 to 40 calls, at the one or two slots each
// client of a large fleet holds, are too few for a baseline: clients whose baselines are a few
// percent apart take unequal shares. A window's are enough, and below the capacity the
// windows cost a twentieth of it where halving for a whole window cost half.
func (a *lossDelay) endStartProbe(mean, ratio float64) {
	if ratio < stillQueued {
		a.baseline = min(a.baseline, max(mean, 1))
		a.limit = half(a.minLimit, a.afterProbe)
		return
	}
	a.limit = a.afterProbe * min(1, ratio*startShare)
	a.gather()
}

// gathered takes a window's latency into the first baseline after a start in loss: each
// window's is an upper bound on the no-load latency, and the baseline is the lowest. After the
// last, the baseline is confirmed, and no slow start begins: the capacity is the fleet's.
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
	// stillQueued is 1/(2*0.85). Where half a fleet's calls are still at the capacity or above
	// it, the latency falls by as much as the calls; below it, to the no-load latency, the
	// capacity's share of the calls before. A fall to under 1/1.7 leaves half the calls at 85%
	// of the capacity or more.
	stillQueued = 1 / 1.7
	// startShare is the share of the calls that did not queue that the limit keeps, to run
	// below the capacity while the baseline is read.
	startShare = 0.95
	// startWindows is how many windows the first baseline after a start in loss is read from.
	startWindows = 3
)

// oneReading is how near the window before a first probe must read, as a share, for the two
// to confirm the baseline alone, where the limiter did not start in loss: a client alone in
// front of its dependency probes once.
const oneReading = 0.05

// learnLower moves the baseline halfway down to an uncongested window's latency where that is
// lower: the baseline never learns a higher latency from a window.
func (a *lossDelay) learnLower(mean float64) {
	if mean < a.baseline {
		a.baseline += (max(mean, 1) - a.baseline) / 2
	}
}

// stall counts a congested window and reports whether the latency has stayed within a tenth
// of the first of RelearnAfter or more such windows in a row while they cut the limit to an
// eighth: a queue of this limiter's own making would have shrunk. A limit held at MinLimit
// is no such evidence, nor is one below 1, of a limiter that holds one call at most: in a
// fleet, the others' calls keep the queue. Windows of loss between
// them do not break the run: a dependency that got slower times calls out too (the shift
// scenario: 37% of the capacity where they did).
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

// lossGradient is tolerance*baseline/mean in [0.5, 1]: a window of loss backs off by it
// where it is lower than BackoffRatio. It is 1 while the latency is within tolerance of the
// baseline, or while there is no baseline yet.
func lossGradient(tolerance, baseline, mean float64) float64 {
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

// jitteredInterval is interval scaled by a factor uniform in [0.5, 1) drawn from r, so that
// a fleet's limiters, started together, do not probe together; at least 1.
func jitteredInterval(interval int, r float64) int {
	return saturate(float64(interval)*(0.5+r/2), 1, max(1, interval))
}
