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

	closes atomic.Int64 // twice the windows closed: written by the goroutine that closes them
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
// does not say that they are shut at the limit: a call of the class found no slot. Without
// classes, where ce is nil, there is nothing to lower.
func (l *Limiter) turnAway(ce *ceiling) {
	if ce == nil {
		return
	}
	if limit := l.slots.limit.Load(); !ce.shutAt(limit) {
		l.classes.ceilings.turnedAway(ce, len(l.classes.names), limit)
	}
}

// turnedAway takes one more slot back from each class below the class of ce, of classes, for
// a call of the class turned away for want of a slot, and marks its word of shut where every
// one of them is shut now at limit (see ceilings).
func (cl *ceilings) turnedAway(ce *ceiling, classes int, limit int64) {
	s := ce.shutBelow.Load()
	if cl.withhold(ce.c, classes) {
		ce.markShut(limit, s)
	}
}

// withhold takes one more slot back from each class below class c, of classes, from which
// less than its most are taken back, and reports whether they all are from each now. A class's
// most is the lent slots, and after a window in which the classes above it turned calls away,
// at most needFactor times the slots they lacked in it (windowClosed): in sustained overload,
// what they take back within a window is bounded by what they needed in the last one rather
// than by how many of their calls are turned away in this one.
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

// lowering runs lower, which lowers what is held back from the classes, of classes, as a
// window closes: every class's word of shut but the lowest's is rewritten before it, so that a
// call turned away while it runs takes its slot back rather than trust a word written before
// the close, and after it, so that no word written while it ran says shut (see turnedAway).
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
// them turned a call away: the slots go back to class c step by step, so that a class above
// that meets overload again finds it shut off before long.
func (cl *ceilings) lend(c int) {
	lent := cl.lent.Load()
	cl.lower(c, func(v int64) int64 { return min(v, lent) / 2 })
}

// bound holds back at most short slots from class c, as a window closes in which the classes
// above it lacked short slots: slots held back beyond them would stay idle, since nobody
// above asked for them. A class whose own bursts now and then fill the limit, while the
// classes below hold nothing, so holds back what its bursts lacked rather than the whole
// limit for as long as they recur.
func (cl *ceilings) bound(c int, short int64) {
	lent := cl.lent.Load()
	cl.lower(c, func(v int64) int64 { return min(v, short, lent) })
}

// lower lowers what the classes above class c took back from v to to(v), but never below what
// the class above it has taken back from it, so that no class's ceiling rises above a higher
// class's (borrowing goes downwards only) where the class above is lent slots and class c is
// bound, or while calls turned away raise both. That is read again at each try: a call turned
// away raises the class above before class c (withhold), so a raise of the one this read
// missed is either seen by the compare-and-swap, which then fails, or comes after it and
// raises class c too.
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

// windowClosed lends the slots held back from the classes below the highest class that turned
// no call away in the window: that rejected none and has nobody waiting. From the classes
// below one that did, it holds back no more than the slots that the classes above them
// lacked: the calls they turned away in the window, each for the time a call held a slot in
// it, and those waiting now; and in the next window calls turned away take back from them at
// most needFactor times that (withhold). It runs as the window closes, in the goroutine that closes it,
// with the window's samples and the most calls in flight that they saw.
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
// they turned away in it, each for as long as a call of the window held its slot. By
// Little's law that is at most maxInFlight/samples of the window, so the calls turned away
// would have held turned*maxInFlight/samples slots on average, and never more than one
// each. A hundred calls turned away in a second, each of which would have run for 10ms,
// lacked one slot, not a hundred: holding back more would leave slots idle. Within a window
// turnedAway still takes back one slot per call, up to the class's most (withhold), so a
// burst gets its slots back at once.
func lacked(turned, samples uint64, maxInFlight int) int64 {
	if turned == 0 {
		return 0
	}
	n := float64(turned) * float64(max(maxInFlight, 1)) / float64(max(samples, 1))
	return int64(min(math.Ceil(n), float64(turned)))
}

// needFactor bounds what calls turned away take back from a class within a window that
// follows one in which the classes above it turned calls away: at most this many times the
// slots they lacked in that window (lacked), and those waiting as it closed. A window that
// follows a calm one takes back up to the lent slots, so that a burst gets its slots at once.
// Without the bound, sustained overload of a class above (in the simulator's priority
// scenario with -critical 0.6, tens to hundreds of critical calls turned away in each window
// while the limit grows past the critical calls' 30 ± 5.5 slots) took every lent slot back
// within the window, and the sheddable class was shut for most of it while the critical
// calls left part of the limit idle: Gradient2 lost 2.6 points of the capacity against its
// total without classes, AIMD 2.4. Measured with seed 1 in that scenario, and with -reserve 0,
// where the critical calls have only what they take back: a factor of 2 left 95.0-95.7% of
// the critical calls answered in windows 3 and 4 at -critical 0.25; 4 and 5 left 97.6-98.9%
// of them answered in a phase with -reserve 0, under the 99% target; 6
// meets every target and brings every algorithm's total within 1.8 points of its total
// without classes at both critical shares (Gradient2 at -critical 0.6); 8 leaves Gradient2
// 2.1 points below.
const needFactor = 6
