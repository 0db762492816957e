package adaptivelimit

import (
	"math"
	"sync/atomic"
)

// windowState is read by every call and written once a window, so it has a line of its own,
// away from the shared count of slots.
type windowState struct {
	_   pad
	end atomic.Int64  // clock units: the first completion at or after it may close the window
	id  atomic.Uint64 // windows closed so far
	_   pad
}

// closeWindow ends the window if it is over and holds enough samples, and recomputes the
// limit. One goroutine at a time closes; the others return at once rather than wait.
func (l *Limiter) closeWindow(now int64) {
	if !l.closing.CompareAndSwap(false, true) {
		return
	}
	defer l.closing.Store(false)
	end := l.window.end.Load()
	if now < end {
		// Closed by another goroutine since this one looked, or now is before the window's
		// start. That is a reading taken long ago, or a clock that stepped back: read it
		// again, and if it is still before the start, move the window to now, keeping its
		// samples, rather than stall every window until the clock is back.
		if start := end - l.windowUnits; now < start {
			if now = l.src.now(); now < start {
				l.window.end.Store(later(now, l.windowUnits))
			}
		}
		return
	}
	id := l.window.id.Load()
	read := l.stripes.sum(id)
	probe, _ := l.algorithm.(*lossDelay)
	if probe != nil && probe.draining {
		// LossDelay's probe has waited for the calls admitted before it: what they sampled
		// queued at the limit before the probe, and is left out. It measures from here, and
		// its window ends once it has samples enough, or at its bound whatever it has.
		probe.draining, probe.early = false, false
		l.read = read
		l.window.id.Store(id + 1)
		l.window.end.Store(later(now, l.src.units(probe.measureTime())))
		probe.until = later(now, l.src.units(duration(probe.measureMost())))
		return
	}
	samples := since(read.samples, l.read.samples)
	if samples < uint64(l.cfg.MinWindowSamples) {
		if probe != nil && probe.probing {
			if now < probe.until {
				l.window.end.Store(probe.until) // the probe waits for samples until its bound
				l.closeClasses(samples, read)
				return
			}
		} else {
			// Too few samples: extend the window by whole windows until it ends after now,
			// keeping its samples. With no traffic for a while that is several windows at once.
			over := uint64(now-end) % uint64(l.windowUnits)
			l.window.end.Store(later(now, l.windowUnits-int64(over)))
			l.closeClasses(samples, read)
			return
		}
	}
	latency := float64(since(read.latencyHigh, l.read.latencyHigh))*(1<<32) +
		float64(since(read.latencyLow, l.read.latencyLow))
	w := window{
		samples:     samples,
		drops:       min(since(read.drops, l.read.drops), samples),
		meanLatency: latency / float64(max(samples, 1)) * l.src.nanosPerUnit,
		maxInFlight: count(read.maxInFlight),
	}
	l.read = read
	l.judgeDepartures(w, id)
	resumes := probe != nil && (probe.probing || probe.early && probe.confirmed)
	d := Decision{
		Samples:     count(w.samples),
		Drops:       count(w.drops),
		MeanLatency: duration(w.meanLatency),
		MaxInFlight: w.maxInFlight,
		LimitBefore: l.Limit(),
	}
	d = l.algorithm.next(w, d)
	d.LimitAfter = int(l.setLimit(int64(clamp(d.LimitAfter, l.cfg.MinLimit, l.cfg.MaxLimit))))
	l.setPace(&d, now)
	before := l.exact
	l.exact = d.ExactLimit
	if d.LimitAfter > d.LimitBefore {
		l.passOn() // the new slots go to waiters first
	}
	if l.mode == classed {
		l.classes.windowClosed(w.samples, w.maxInFlight)
		l.passOn() // the slots lent again go to waiters of the classes below
	}
	l.window.id.Store(id + 1)
	if l.leases {
		l.stripes.recount()
		l.endLeases()
	}
	l.window.end.Store(l.nextEnd(now, resumes))
	l.publish(&d, before)
	if moved(&d, before) && l.cfg.OnLimitChange != nil {
		l.cfg.OnLimitChange(l.cfg.Name, d)
	}
}

// closeClasses lends what the classes above took back (classSet.windowClosed) as a window
// ends with too few samples to move the limit, from the samples it has: the classes' windows
// end on time, so that lending resumes whether calls finish or not.
func (l *Limiter) closeClasses(samples uint64, read totals) {
	if l.mode == classed {
		l.classes.windowClosed(samples, count(read.maxInFlight))
		l.passOn()
	}
}

// nextEnd is when the window that starts at now ends, where resumes says whether it is the
// rest of the one that ended. A window lasts Config.Window, and LossDelay's probe is the first
// part of one: it begins with its drain, and once it is over, the rest of that window runs at
// the limit it gave back. So the windows of a fleet's limiters, started together, stay
// together, and so do their probes. Once the baseline is confirmed, so is a window that closed
// early for its loss; before, the window after it is a whole one, whose start leaves the calls
// of the one that closed out of its drops (noteDrop).
func (l *Limiter) nextEnd(now int64, resumes bool) int64 {
	probe, _ := l.algorithm.(*lossDelay)
	switch {
	case probe == nil:
	case probe.draining:
		probe.resume = later(now, l.windowUnits)
		return later(now, l.src.units(probe.drainTime()))
	case resumes && !probe.probing && probe.resume > now:
		return probe.resume
	}
	return later(now, l.windowUnits)
}

// since is how much a cumulative counter grew from before to now. A counter that went
// backwards, which a torn plain add could do, grew by 0: a sample may be lost, never invented.
func since(now, before uint64) uint64 {
	if d := now - before; int64(d) >= 0 {
		return d
	}
	return 0
}

// count converts a count to an int, saturating where int has 32 bits.
func count(n uint64) int { return int(min(n, math.MaxInt)) }

// noteDrop counts a drop for LossDelay, which may close a window before its end: one in
// which a majority of the calls were dropped, at least MinWindowSamples and the 3 drops that
// make a window one of loss. The dependency is overwhelmed, and every moment waited times
// more calls out. It moves the window's end to now, so that the drop's own done closes the
// window, once it has run at least 1/earlyCloses of its length: calls that fail fast close no
// more windows than that. Only the drops of calls that started in the window count: those admitted before
// had their window, and one burst of timeouts must not close window after window. Only drops
// call it, and it reads the stripes only when the window's drops reach that least number
// times a power of two.
func (l *Limiter) noteDrop(start int64) {
	a, ok := l.algorithm.(*lossDelay)
	if !ok || start < l.window.end.Load()-l.windowUnits {
		return
	}
	id := l.window.id.Load()
	n, least := a.drops.add(id), uint64(max(l.cfg.MinWindowSamples, minLossDrops))
	if n < least || n%least != 0 || (n/least)&(n/least-1) != 0 {
		return
	}
	if !l.closing.CompareAndSwap(false, true) {
		return
	}
	defer l.closing.Store(false)
	now := l.src.now()
	if now-(l.window.end.Load()-l.windowUnits) < l.windowUnits/earlyCloses {
		return
	}
	read := l.stripes.sum(id)
	samples := since(read.samples, l.read.samples) + 1 // this drop, not yet added
	drops := since(read.drops, l.read.drops) + 1
	if l.window.id.Load() == id && drops >= least && 2*drops > samples {
		a.early = true // read by the close, which holds closing too
		if !a.probing {
			a.resume = l.window.end.Load()
		}
		l.window.end.Store(now)
	}
}

// earlyCloses is how many windows loss may close in a window's length, at most.
const earlyCloses = 32
