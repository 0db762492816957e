package adaptivelimit

import "sync/atomic"

// phase is what LossDelay knows of its baseline, moved on at a window's end by the methods below:
//
//	phase         baseline            windows                  moves on after
//	starting      none                whole                    loss: startingLost; none (learn):
//	                                                           steady if unfilled, else learning
//	startingLost  none                whole                    none (learn): learningLost
//	learning      an upper bound      each ends with a probe   its probe reads it (endProbe): steady
//	learningLost  an upper bound      each ends with a probe   a probe that finds no fleet's queue
//	                                  of a fifth of a window   (endStartProbe, gather): gathering
//	gathering     the lowest latency  whole                    startWindows (gathered): steady;
//	                                                           loss: learningLost
//	steady        confirmed           a probe now and then     -
//
// A probe (learning, learningLost, steady) keeps the phase: its windows have a step (step).
type phase uint8

const (
	starting phase = iota
	startingLost
	learning
	learningLost
	gathering
	steady
)

// lose moves a on after a window of loss.
func (a *lossDelay) lose() {
	switch a.phase {
	case starting:
		a.phase = startingLost
	case gathering:
		a.phase = learningLost
	}
}

// learn moves a on after its first window without loss; unfilled: it queued nothing of its own.
func (a *lossDelay) learn(unfilled bool) {
	switch {
	case a.phase == startingLost:
		a.phase = learningLost
	case unfilled:
		a.confirm()
	default:
		a.phase = learning
	}
}

// gather reads the first baseline after a start in loss from whole windows (gathered).
func (a *lossDelay) gather() { a.phase, a.gatherLeft = gathering, startWindows }

// confirm takes the baseline as measured, and sets the time to the next periodic probe.
func (a *lossDelay) confirm() {
	a.phase = steady
	a.known.Store(true)
	if a.probeInterval > 0 {
		a.untilProbe = jitteredInterval(a.probeInterval, a.random())
	}
}

// confirmed reports whether the baseline is measured, not only an upper bound on it.
func (a *lossDelay) confirmed() bool { return a.phase == steady }

// probes counts a window that was no probe's, and reports whether a probe follows it: always
// before the baseline is confirmed, every ProbeInterval windows, jittered, after.
func (a *lossDelay) probes() bool {
	switch a.phase {
	case learning, learningLost:
		return true
	case steady:
		if a.probeInterval == 0 {
			return false
		}
		a.untilProbe--
		return a.untilProbe <= 0
	}
	return false
}

// step is the window under way's place in LossDelay's schedule (scheduler):
//
//	step         the window                                 ends                then
//	whole        Config.Window                              at its end          whole
//	rest         the rest of one that a probe, or a close   where that one      whole
//	             for loss once confirmed, cut short         would, if not past
//	closedEarly  whole or rest, most of its calls dropped   now (closesEarly)   rest if confirmed,
//	                                                                            else whole
//	draining     a probe's first part, at half the limit:   drainTime           measuring, without a
//	             the calls admitted before it finish        (endDrain)          decision
//	measuring    the probe's second: its calls' latency     measureTime, or at  rest
//	                                                        its bound (shortEnd)
//
// Where a window ends with a probe (startProbe), the next drains, whatever the step before.
type step uint8

const (
	whole step = iota
	rest
	closedEarly
	draining // a probe's steps come last
	measuring
)

// after is the step after a window of step s that no probe follows, confirmed or not.
func (s step) after(confirmed bool) step {
	if s >= draining || s == closedEarly && confirmed {
		return rest
	}
	return whole
}

// schedule is LossDelay's state for its windows' ends, reached only through scheduler.
type schedule struct {
	step        step        // the window under way's
	until       int64       // clock units: in measuring, the probe's end at the latest
	resume      int64       // clock units: the end of the window a probe or a close for loss cut short
	longest     int64       // clock units: where a paced window stops waiting for its samples (nextEnd)
	leaveOut    bool        // the last close judged the calls in flight at it too (judged)
	drops       dropCount   // the drops of the window under way
	known       atomic.Bool // confirmed(), which stays true once, for dropped, which runs beside the close
	src         *source
	windowUnits int64 // Config.Window
}

func (a *lossDelay) useClock(src *source, window int64) { a.src, a.windowUnits = src, window }

// endDrain ends a probe's drain, leaving out the samples of the calls admitted at the limit
// before it; the probe measures until measureTime, or, short of samples, its bound (until).
func (a *lossDelay) endDrain(now int64) (int64, bool) {
	if a.step != draining {
		return 0, false
	}
	a.step = measuring
	a.until = later(now, a.src.units(duration(a.measureMost())))
	return later(now, a.src.units(a.measureTime())), true
}

// shortEnd is where a window short of samples ends, and whether it waits for more: whole, but
// at once where it closed early (dropped), or after the start's close for loss with
// floodReadSamples and no drop; at its bound (until) for a probe; at longest if paced (nextEnd).
func (a *lossDelay) shortEnd(now, whole int64, samples, drops uint64) (int64, bool) {
	switch {
	case a.step == closedEarly:
		return whole, false
	case a.step == measuring:
		return a.until, now < a.until
	case a.limit < 1 && a.phase == startingLost && samples >= floodReadSamples && drops == 0:
		return whole, false
	case a.limit < 1 && samples > 0:
		return min(whole, a.longest), now < a.longest
	}
	return whole, true
}

// floodReadSamples is the fewest samples, none a drop, that end the paced window after the
// start's close for loss, which paced the calls at a flood's latency (docs/algorithms.md).
// TestFaninRealSimulated: 88.2-90.8% of the capacity at 3, less at 5, 85.4-89.1% waiting for
// MinWindowSamples.
const floodReadSamples = 3

// nextEnd is whole, but where the window drains (drainTime) or is the rest of one (resume): a
// probe begins a window, whose rest runs at the limit it gave back, so that a fleet's windows
// and probes stay together. Before the baseline is confirmed, a whole window follows a close
// for loss, whose start leaves the closed one's calls out of its drops. A paced window waits for
// its samples pacedWindows windows at most, jittered (longest), so a fleet's windows end apart.
func (a *lossDelay) nextEnd(now, whole int64) int64 {
	if a.limit < 1 {
		a.longest = later(now, int64(float64(pacedWindows*a.windowUnits)*(0.5+a.random()/2)))
	}
	switch {
	case a.step == draining:
		a.resume = whole
		return later(now, a.src.units(a.drainTime()))
	case a.step == rest && a.resume > now:
		return a.resume
	}
	return whole
}

// judged reports whether the window just closed, the start's closed early for loss with the
// limit taken below 1, judged the calls still in flight at it too: noteDrop leaves their drops
// out of the next (-real -scenario fanin: 79-80% of the capacity counting them, 84-85% without).
func (a *lossDelay) judged() bool { return a.leaveOut }

// dropped counts a drop in window id and returns the fewest drops that may close the window
// early where its drops are that many times a power of two (doubling), else 0: noteDrop reads
// the stripes only where it is not 0. The fewest are max(MinWindowSamples, minLossDrops), or
// minLossDrops where the limit may go below 1 and no baseline was confirmed (known): a fleet's
// flood at start (lossdelay.go, Limits below 1).
func (a *lossDelay) dropped(id uint64) uint64 {
	n := a.drops.add(id)
	if least := max(a.minSamples, minLossDrops); doubling(n, least) {
		return least
	}
	if a.subUnit() && !a.known.Load() && doubling(n, minLossDrops) {
		return minLossDrops
	}
	return 0
}

// doubling reports whether n is least times a power of two.
func doubling(n, least uint64) bool {
	return n >= least && n%least == 0 && (n/least)&(n/least-1) == 0
}

// closesEarly reports whether a majority of the window's calls, and least (dropped), were
// dropped once it has run 1/earlyCloses of its length, or a quarter for least below
// MinWindowSamples, as every moment waited times more calls out; the window is then closedEarly.
func (a *lossDelay) closesEarly(now, end int64, samples, drops, least uint64) bool {
	ran := now - (end - a.windowUnits)
	if ran < a.windowUnits/earlyCloses || drops < least || 2*drops <= samples ||
		least < a.minSamples && ran < a.windowUnits/4 {
		return false
	}
	if a.step < draining {
		a.step, a.resume = closedEarly, end
	}
	return true
}

// earlyCloses bounds the windows loss closes in a window's length, however fast calls fail.
const earlyCloses = 32

// dropCount is the window under way's drops, with its id in the high half; only drops touch it.
type dropCount struct{ v atomic.Uint64 }

// add counts a drop in window id and returns the window's drops so far.
func (c *dropCount) add(id uint64) uint64 {
	for {
		old := c.v.Load()
		n := uint64(1)
		if old>>32 == id&peakMask {
			n = min(old&peakMask+1, peakMask)
		}
		if c.v.CompareAndSwap(old, (id&peakMask)<<32|n) {
			return n
		}
	}
}
