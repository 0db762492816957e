package adaptivelimit

import (
	"math"
	"sync/atomic"
)

// ceilings hold back slots from each class for the classes above it: a call takes a slot only
// below the limit less its ceiling's hold, neverLent + takenBack (the policy is in
// docs/configuration.md#priority-classes). neverLent moves only with the limit; takenBack only
// by these steps, each keeping it in [0, lent] and at least the class above's:
//
//	event                                         takenBack of each class below   most
//	a call of a class is turned away (turnedAway)  +1, up to min(lent, most)       -
//	a window closes with no call of a class        halved (lend)                   unbounded
//	  above turned away, nobody above waiting
//	a window closes in which the classes above     at most short (bound)           needFactor*short
//	  lacked short slots (lacked, and waiters)
//
// A class is shut when its takenBack reached its most. Each class's word of shut (shutBelow),
// closes<<32 | limit, spares a rejection the steps above in steady overload:
//
//	word                    means                                  written by
//	n<<32, n even or odd    the classes below may not be shut      reopen: every close, as it
//	                                                               begins (odd) and ends (even)
//	n<<32 | L, n even       every class below was shut at limit L  markShut: a CAS from the word
//	                        after close n/2 ended                  read before withhold shut them
//
// A call turned away under a limit at most L reads only the word (shutAt). A close begun since
// the word was read fails the CAS, so a shut word is never older than the last lowering. The
// lowest class's word says shut at every limit. The count's wrapping misleads only a call
// stalled between two of its steps for 2^31 closes.
type ceilings struct {
	_     pad
	class [MaxClasses]ceiling
	_     pad

	// lent bounds every takenBack: the limit less every never-lent part, written as the limit
	// moves (setLimit), so that a class keeps its never-lent part and those below it (see Class).
	lent atomic.Int64

	closes  atomic.Int64 // twice the windows closed: written by the goroutine that closes them
	classes int          // how many classes there are
}

// ceiling is one class's hold, read by each call of the class, and its word of shut, read by
// those turned away. Each is written only when it changes: a shut class's bounces no line.
type ceiling struct {
	neverLent atomic.Int64 // the never-lent parts of the reserves above the class
	takenBack atomic.Int64 // what the classes above took back lately: at most ceilings.lent
	most      atomic.Int64 // the most that calls turned away take back from it in the window: see withhold
	shutBelow atomic.Int64 // closes<<32 | a limit at which the classes below it are shut (turnedAway)
	c         int          // the class
}

// hold returns what the class of ce may not take of the limit; 0 for a nil ce (no classes).
func (ce *ceiling) hold() int64 {
	if ce == nil {
		return 0
	}
	return ce.neverLent.Load() + ce.takenBack.Load()
}

func (ce *ceiling) index() uint8 {
	if ce == nil {
		return 0
	}
	return uint8(ce.c)
}

func (cl *ceilings) hold(c int) int64 { return cl.class[c].hold() }

// setNeverLent sets class c's neverLent to n, for the goroutine that sets the limit.
func (cl *ceilings) setNeverLent(c int, n int64) {
	if k := &cl.class[c].neverLent; k.Load() != n {
		k.Store(n)
	}
}

// turnAway runs turnedAway for a call of the class of ce that found no slot, unless shutAt.
func (l *Limiter) turnAway(ce *ceiling) {
	if limit := l.slots.limit.Load(); !ce.shutAt(limit) {
		l.classes.ceilings.turnedAway(ce, limit)
	}
}

// turnedAway takes a slot back from each class below the class of ce (withhold), and where
// that shut them all, says so in the word of shut of ce (markShut).
func (cl *ceilings) turnedAway(ce *ceiling, limit int64) {
	s := ce.shutBelow.Load()
	if cl.withhold(ce.c, cl.classes) {
		ce.markShut(limit, s)
	}
}

// withhold takes one more slot back from each class below class c, of classes, up to its
// most, and reports whether each is at its most now (shut).
func (cl *ceilings) withhold(c, classes int) (shut bool) {
	lent := cl.lent.Load()
	shut = true
	var most int64
	for d := c + 1; d < classes; d++ {
		r := &cl.class[d].takenBack
		// Never less than the class above, whose most may be unbounded where this one's is not.
		most = max(most, min(lent, cl.class[d].most.Load()))
		v := r.Load()
		for v < most && !r.CompareAndSwap(v, v+1) {
			v = r.Load()
		}
		shut = shut && v+1 >= most
	}
	return shut
}

// markShut sets the word of shut of ce to limit where it still holds s, read before withhold
// found the classes below shut, and s is even: no close began since, nor ran then.
func (ce *ceiling) markShut(limit, s int64) {
	if s>>32&1 == 0 {
		ce.shutBelow.CompareAndSwap(s, s&^math.MaxUint32|limit)
	}
}

// shutAt reports whether the word of shut of ce says the classes below are shut at limit.
func (ce *ceiling) shutAt(limit int64) bool { return uint32(limit) <= uint32(ce.shutBelow.Load()) }

// lowering runs lower as a window closes, between two reopens (see ceilings).
func (cl *ceilings) lowering(classes int, lower func()) {
	cl.reopen(classes)
	lower()
	cl.reopen(classes)
}

// reopen sets the word of shut of every class but the lowest to the next count of closes:
// odd as a close begins, even as it ends.
func (cl *ceilings) reopen(classes int) {
	n := cl.closes.Add(1)
	for c := range classes - 1 {
		cl.class[c].shutBelow.Store(n << 32)
	}
}

// lend halves the takenBack of class c, not clearing it, so that overload above soon shuts it.
func (cl *ceilings) lend(c int) {
	lent := cl.lent.Load()
	cl.lower(c, func(v int64) int64 { return min(v, lent) / 2 })
}

// bound holds back at most short from class c: more would idle, since nobody above asked.
func (cl *ceilings) bound(c int, short int64) {
	lent := cl.lent.Load()
	cl.lower(c, func(v int64) int64 { return min(v, short, lent) })
}

// lower lowers the takenBack of class c from v to to(v), but never below the class above's,
// read again at each try: withhold raises the class above first, so a raise this read missed
// makes the CAS fail, or comes after it and raises class c too.
func (cl *ceilings) lower(c int, to func(v int64) int64) {
	r := &cl.class[c].takenBack
	for {
		v := r.Load()
		t := to(v)
		if c > 0 {
			t = max(t, cl.class[c-1].takenBack.Load())
		}
		if t >= v || r.CompareAndSwap(v, t) {
			return
		}
	}
}

// windowClosed moves each class's ceiling as a window closes, in the goroutine that closes it
// (see ceilings): it lends where no class above turned a call away or has a waiter, else bounds.
func (cs *classSet) windowClosed(samples uint64, maxInFlight int, waiters []waitList) {
	cs.ceilings.lowering(len(cs.names), func() {
		var turned uint64 // calls that the classes above turned away in the window
		var waiting int64 // callers of the classes above waiting now
		for c := range cs.names {
			if turned == 0 && waiting == 0 {
				cs.ceilings.lend(c)
				cs.ceilings.class[c].most.Store(math.MaxInt64)
			} else {
				short := lacked(turned, samples, maxInFlight) + waiting
				cs.ceilings.bound(c, short)
				cs.ceilings.class[c].most.Store(needFactor * short)
			}
			r := cs.rejections(c)
			turned += r - cs.seen[c]
			waiting += waiters[c].count.Load()
			cs.seen[c] = r
		}
	})
}

// lacked returns the slots the classes above lacked in a window, rounded up: turned times
// maxInFlight/samples (Little's law), at most one each (docs/configuration.md has an example).
func lacked(turned, samples uint64, maxInFlight int) int64 {
	if turned == 0 {
		return 0
	}
	n := float64(turned) * float64(max(maxInFlight, 1)) / float64(max(samples, 1))
	return int64(min(math.Ceil(n), float64(turned)))
}

// needFactor times the slots lacked (and the waiters) bounds what calls turned away take back in
// the next window: else sustained overload above took every lent slot back each window, leaving
// part of the limit idle. In limitsim -scenario priority (seed 1, -critical 0.25 and 0.6,
// -reserve 0 too), 2 answers 95.0-95.7% of the critical calls in windows 3 and 4, 4 and 5
// 97.6-98.9% with -reserve 0 (target 99%); 6 meets every target, each algorithm's total within
// 1.8 points of its total without classes; 8 leaves Gradient2 2.1 below.
const needFactor = 6
