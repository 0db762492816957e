package adaptivelimit

import (
	"math"
	"sync/atomic"
)

// ceilings hold back slots of the limit from each class for the classes above it (see
// Class): a call of a class takes a slot only while the slots taken are below the limit less
// what its class's ceiling holds back (ceiling.hold). This is their one design comment.
//
// A class's ceiling holds back hold = neverLent + takenBack. neverLent moves only with the
// limit; takenBack moves by these steps, each of which keeps it within [0, lent], and never
// below the takenBack of the class above (borrowing goes downwards only):
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
// A call turned away under a limit at most L reads the word alone (shutAt). A close begun since
// the word was read makes the CAS fail, so a word that says shut is never older than the last
// lowering. The lowest class's word says shut at every limit: it has no class below it. One
// call would have to stop between two of its steps for 2^31 closes to be misled by the count's
// wrapping around.
type ceilings struct {
	_     pad
	class [MaxClasses]ceiling
	_     pad

	// lent is the most that calls turned away may take back from a class: the limit less the
	// never-lent parts of every reserve, written only as the limit moves. A class whose own
	// reserve or a reserve below it has a never-lent part so keeps that many slots, and the
	// class of a never-lent part has it at once after any history of calls (see Class).
	lent atomic.Int64

	closes  atomic.Int64 // twice the windows closed: written by the goroutine that closes them
	classes int          // how many classes there are
}

// ceiling is one class's: what it holds back, which every call of the class reads, and its
// word of shut, which a call of the class turned away reads. They are written only when they
// change: as the limit moves, while the classes above are turned away until it is shut, as
// the classes below are shut, and as a window closes.
type ceiling struct {
	neverLent atomic.Int64 // the never-lent parts of the reserves above the class
	takenBack atomic.Int64 // what the classes above took back lately: at most ceilings.lent
	most      atomic.Int64 // the most that calls turned away take back from it in the window: see withhold
	shutBelow atomic.Int64 // closes<<32 | a limit at which the classes below it are shut (turnedAway)
	c         int          // the class
}

// hold returns what the class of ce may not take of the limit: 0 for the highest class, and
// for the one class of a limiter without classes, whose ceiling is nil.
func (ce *ceiling) hold() int64 {
	if ce == nil {
		return 0
	}
	return ce.neverLent.Load() + ce.takenBack.Load()
}

// index returns the class of ce: 0 for nil, the one class of a limiter without classes.
func (ce *ceiling) index() uint8 {
	if ce == nil {
		return 0
	}
	return uint8(ce.c)
}

// hold returns what class c may not take of the limit.
func (cl *ceilings) hold(c int) int64 { return cl.class[c].hold() }

// setNeverLent sets the never-lent parts of the reserves above class c to n, for the
// goroutine that sets the limit.
func (cl *ceilings) setNeverLent(c int, n int64) {
	if k := &cl.class[c].neverLent; k.Load() != n {
		k.Store(n)
	}
}

// turnAway lowers the ceilings of the classes below the class of ce, where its word of shut
// does not say that they are shut at the limit: a call of the class found no slot.
func (l *Limiter) turnAway(ce *ceiling) {
	if limit := l.slots.limit.Load(); !ce.shutAt(limit) {
		l.classes.ceilings.turnedAway(ce, limit)
	}
}

// turnedAway takes one more slot back from each class below the class of ce for
// a call of the class turned away for want of a slot, and marks its word of shut where every
// one of them is shut now at limit (see ceilings).
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
		// Never less from a class than from the class above it: a class whose most is
		// unbounded (the classes above it turned no call away) may lie above one whose is.
		most = max(most, min(lent, cl.class[d].most.Load()))
		v := r.Load()
		for v < most && !r.CompareAndSwap(v, v+1) {
			v = r.Load()
		}
		shut = shut && v+1 >= most
	}
	return shut
}

// markShut makes the class's word of shut say that the classes below it are shut at limit,
// where it still holds s, read before withhold found them so, and s was not written while a
// close lowered them: where no close began since, nor ran then.
func (ce *ceiling) markShut(limit, s int64) {
	if s>>32&1 == 0 {
		ce.shutBelow.CompareAndSwap(s, s&^math.MaxUint32|limit)
	}
}

// shutAt reports whether the class's word of shut says that the classes below it are shut
// at limit, so that a call of the class turned away takes nothing back (turnedAway).
func (ce *ceiling) shutAt(limit int64) bool { return uint32(limit) <= uint32(ce.shutBelow.Load()) }

// lowering runs lower as a window closes, between two reopens (see ceilings).
func (cl *ceilings) lowering(classes int, lower func()) {
	cl.reopen(classes)
	lower()
	cl.reopen(classes)
}

// reopen says of every class but the lowest, of classes, that the classes below it may not be
// shut, with the next count of closes: odd as a close begins, even as it ends.
func (cl *ceilings) reopen(classes int) {
	n := cl.closes.Add(1)
	for c := range classes - 1 {
		cl.class[c].shutBelow.Store(n << 32)
	}
}

// lend halves what the classes above class c took back, as a window closes in which none of
// them turned a call away: a class above that meets overload again finds it shut before long.
func (cl *ceilings) lend(c int) {
	lent := cl.lent.Load()
	cl.lower(c, func(v int64) int64 { return min(v, lent) / 2 })
}

// bound holds back at most short slots from class c, as a window closes in which the classes
// above it lacked short slots: more would stay idle, since nobody above asked for them.
func (cl *ceilings) bound(c int, short int64) {
	lent := cl.lent.Load()
	cl.lower(c, func(v int64) int64 { return min(v, short, lent) })
}

// lower lowers what the classes above class c took back from v to to(v), but never below the
// class above's, read again at each try: a call turned away raises the class above before
// class c (withhold), so a raise this read missed makes the compare-and-swap fail, or comes
// after it and raises class c too.
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

// windowClosed moves what each class's ceiling holds back as a window closes, in the
// goroutine that closes it, from the window's samples and the most calls in flight they saw
// (see ceilings): it lends to the classes below the highest class that turned no call away
// and has nobody waiting, and bounds the classes below one that did.
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

// lacked is how many slots the classes above lacked through a window, rounded up: the calls
// they turned away, each for as long as a call of the window held its slot (by Little's law,
// maxInFlight/samples of the window), and never more than one each. A hundred calls turned
// away in a second, each of which would have run for 10ms, lacked one slot, not a hundred.
func lacked(turned, samples uint64, maxInFlight int) int64 {
	if turned == 0 {
		return 0
	}
	n := float64(turned) * float64(max(maxInFlight, 1)) / float64(max(samples, 1))
	return int64(min(math.Ceil(n), float64(turned)))
}

// needFactor bounds what calls turned away take back from a class in a window after one in
// which the classes above it turned calls away: this many times the slots they lacked then
// (lacked), and those waiting. Without it, sustained overload of a class above took every
// lent slot back within each window while the class above left part of the limit idle.
// Measured in limitsim's priority scenario, seed 1, -critical 0.25 and 0.6, -reserve 0 too: 2
// answered 95.0-95.7% of the critical calls in windows 3 and 4; 4 and 5, 97.6-98.9% with
// -reserve 0, under the 99% target; 6 meets every target with every algorithm's total within
// 1.8 points of its total without classes; 8 leaves Gradient2 2.1 points below.
const needFactor = 6
