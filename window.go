package adaptivelimit

import (
	"math"
	"sync/atomic"
)

// window is what a closed window tells an algorithm.
type window struct {
	samples     uint64
	drops       uint64
	meanLatency float64 // nanoseconds
	maxInFlight int     // the most calls in flight that a sample of the window saw, itself included
	length      float64 // nanoseconds from the window's start to its close
}

// windowState is read by every call and written once a window: a line of its own, away from
// the slots' count.
type windowState struct {
	_   pad
	end atomic.Int64  // clock units: the first completion at or after it may close the window
	id  atomic.Uint64 // windows closed so far
	_   pad
}

// closeWindow ends the window if it is over and holds enough samples, and recomputes the
// limit. One goroutine at a time closes; the others do not wait.
func (l *Limiter) closeWindow(now int64) {
	if !l.closing.CompareAndSwap(false, true) {
		return
	}
	defer l.closing.Store(false)
	end := l.window.end.Load()
	if now < end {
		// Closed since, or an old reading or a clock stepped back: still before the start, the
		// window moves to now, with its samples, rather than stall until the clock is back.
		if start := end - l.windowUnits; now < start {
			if now = l.src.now(); now < start {
				l.window.end.Store(later(now, l.windowUnits))
			}
		}
		return
	}
	id := l.window.id.Load()
	read := l.stripes.sum(id)
	if l.schedule != nil {
		if end, ok := l.schedule.endDrain(now); ok {
			l.read, l.opened = read, now
			l.window.id.Store(id + 1)
			l.window.end.Store(end)
			return
		}
	}
	samples := since(read.samples, l.read.samples)
	if samples < uint64(l.cfg.MinWindowSamples) {
		// Too few samples: extend the window by whole windows (several after a lull) past now.
		over := uint64(now-end) % uint64(l.windowUnits)
		next, waits := later(now, l.windowUnits-int64(over)), true
		if l.schedule != nil {
			next, waits = l.schedule.shortEnd(now, next, samples, since(read.drops, l.read.drops))
		}
		if waits {
			l.unslow()
			l.window.end.Store(next)
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
		length:      float64(max(now-l.opened, 0)) * l.src.nanosPerUnit,
	}
	l.read, l.opened = read, now
	l.judgeDepartures(w, id)
	d := Decision{
		Samples:     count(w.samples),
		Drops:       count(w.drops),
		MeanLatency: duration(w.meanLatency),
		MaxInFlight: w.maxInFlight,
		LimitBefore: l.Limit(),
	}
	d = l.algorithm.next(w, d)
	if l.schedule != nil {
		// For the next window only: a clock that steps back leaves out no more than its drops.
		if l.schedule.judged() {
			l.leftOut.Store(now)
		} else if l.leftOut.Load() != math.MinInt64 {
			l.leftOut.Store(math.MinInt64)
		}
	}
	d.LimitAfter = int(l.setLimit(int64(clamp(d.LimitAfter, l.cfg.MinLimit, l.cfg.MaxLimit))))
	l.setPace(&d, now)
	before := l.exact
	l.exact = d.ExactLimit
	if d.LimitAfter > d.LimitBefore {
		l.passOn() // the new slots go to waiters first
	}
	if l.classes != nil {
		l.classes.windowClosed(w.samples, w.maxInFlight, l.wait.lists)
		l.passOn() // the slots lent again go to waiters of the classes below
	}
	l.window.id.Store(id + 1)
	if l.leases {
		l.stripes.recount()
		l.endLeases()
	}
	next := later(now, l.windowUnits)
	if l.schedule != nil {
		next = l.schedule.nextEnd(now, next)
	}
	l.window.end.Store(next)
	l.publish(&d, before)
	if moved(&d, before) && l.cfg.OnLimitChange != nil {
		l.cfg.OnLimitChange(l.cfg.Name, d)
	}
}

// closeClasses lends again what the classes above took back (classSet.windowClosed) at a
// window short of samples: the classes' windows end on time, whether calls finish or not.
func (l *Limiter) closeClasses(samples uint64, read totals) {
	if l.classes != nil {
		l.classes.windowClosed(samples, count(read.maxInFlight), l.wait.lists)
		l.passOn()
	}
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

// noteDrop slows a paced limiter's pace (slowPace), and counts a drop of a call started at
// start for the scheduler, which may end the window now (closesEarly) for the drop's done to
// close; only calls started in the window count, or one burst of timeouts would close window
// after window. It reports whether the drop is left out (before leftOut): no sample then.
func (l *Limiter) noteDrop(start int64) (leftOut bool) {
	l.slowPace()
	if start < l.leftOut.Load() {
		return true
	}
	s := l.schedule
	if s == nil || start < l.window.end.Load()-l.windowUnits {
		return false
	}
	id := l.window.id.Load()
	least := s.dropped(id)
	if least == 0 || !l.closing.CompareAndSwap(false, true) {
		return false
	}
	defer l.closing.Store(false)
	now, end := l.src.now(), l.window.end.Load()
	read := l.stripes.sum(id)
	samples := since(read.samples, l.read.samples) + 1 // this drop, not yet added
	drops := since(read.drops, l.read.drops) + 1
	if l.window.id.Load() == id && s.closesEarly(now, end, samples, drops, least) {
		l.window.end.Store(now)
	}
	return false
}
