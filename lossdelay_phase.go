package adaptivelimit

import "sync/atomic"

// phase is what LossDelay knows of its baseline. It moves on at the end of a window (next),
// only in the methods that follow:
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
// A probe runs in learning, learningLost and steady, and the phase holds while it runs: the
// window under way has a step of its own (step).
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

// learn moves a on after its first window without loss, which gave the baseline; unfilled
// says the window did not fill its limit, so that it queued nothing of its own.
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

// gather starts reading the first baseline after a start in loss from whole windows (gathered).
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

// probes counts a window that was no probe's, and reports whether a probe follows it: every
// window does before the baseline is confirmed, and with ProbeInterval one every so many
// windows after.
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

// step is what the window under way is to LossDelay's schedule, which the window's close and
// the drops consult through scheduler:
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

// after is the step of the window after one of step s closes without a probe following it;
// confirmed says whether the baseline was confirmed.
func (s step) after(confirmed bool) step {
	if s >= draining || s == closedEarly && confirmed {
		return rest
	}
	return whole
}

// schedule is LossDelay's state for its windows' ends, which Limiter reaches only through
// scheduler (algorithm.go), with the methods below.
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

// endDrain ends a probe's drain: the calls admitted before the probe sampled the queue at the
// limit before it, and their samples are left out. The probe measures from now, until it has
// samples enough (measureTime), or until its bound (until) whatever it has.
func (a *lossDelay) endDrain(now int64) (int64, bool) {
	if a.step != draining {
		return 0, false
	}
	a.step = measuring
	a.until = later(now, a.src.units(duration(a.measureMost())))
	return later(now, a.src.units(a.measureTime())), true
}

// shortEnd is whole, but for a probe short of samples, which waits for them until its bound;
// a window closed early, which closes with the samples it has (dropped); the paced window
// after the start's close for loss, which closes with floodReadSamples samples and no drop;
// and any other paced window with a sample, which waits for more until its longest
// (nextEnd), then closes with them.
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
// start's close for loss (shortEnd). That close paced the calls at the latency of a flood,
// near the callers' timeout, which holds a fleet below the capacity until a window reads the
// latency again: waiting for MinWindowSamples, the real fan-in got 85.4-89.1% of the capacity
// (TestFaninRealSimulated), 88.2-90.8% at 3, less at 5.
const floodReadSamples = 3

// nextEnd is whole, but where the window drains (drainTime) or is the rest of one (resume).
// A probe is the first part of a window: it begins with its drain, and once it is over, the
// rest of that window runs at the limit it gave back. So the windows of a fleet's limiters,
// started together, stay together, and so do their probes. Once the baseline is confirmed,
// the rest of a window that closed early for its loss runs too; before, the window after it
// is a whole one, whose start leaves the calls of the one that closed out of its drops.
//
// A paced window waits for its samples pacedWindows windows at most, jittered as
// jitteredInterval does (longest): a client of a fleet of 10,000 sends a call a second or
// fewer, and its windows would wait ten seconds or more for MinWindowSamples; so would a
// dependency back from an incident. The fleet's windows, started together, end apart.
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

// judged reports whether the window that just closed judged the calls still in flight at its
// close too, so that their drops are left out of the window after it (noteDrop): the start's
// window, closed early for loss with the limit taken below 1. A fleet started together at
// InitialLimit floods its dependency, and the calls each client admitted at that limit time
// out after its window closed at the third drop; counted again, they would cut the limit
// again in the next window, which a paced client, with a few calls a second, decides
// seconds later, and regrows from slowly (-real -scenario fanin: 79-80% of the capacity with
// them, 84-85% without).
func (a *lossDelay) judged() bool { return a.leaveOut }

// dropped counts a drop in window id, and returns the fewest drops that may close the window
// early, where the window's drops are that many times a power of two (doubling), and 0
// otherwise: only then does noteDrop read the stripes. The fewest are MinWindowSamples, and
// the minLossDrops that make a window one of loss; only minLossDrops where the limit may go
// below 1 and no baseline was ever confirmed (known), as in a fleet started together beyond
// its dependency's capacity (lossdelay.go, limits below 1).
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

// closesEarly reports whether a majority of the window's calls were dropped, at least least
// (dropped), once it has run 1/earlyCloses of its length, and a quarter of it where least is
// below MinWindowSamples: a limiter whose calls have that many drops by then closes at
// MinWindowSamples, as it did before limits went below 1. The dependency is overwhelmed, and
// every moment waited times more calls out; calls that fail fast close no more windows than
// earlyCloses a window. Unless a probe's, the window is then closedEarly.
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

// earlyCloses is how many windows loss may close in a window's length, at most.
const earlyCloses = 32

// dropCount is the number of drops in the window under way, with the window's id in the
// high half, so that the first drop of a new window starts from one. Only drops touch it.
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
