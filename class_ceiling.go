package adaptivelimit

import (
	"math"
	"sync/atomic"
)

// ceilings hold back slots of the limit from each class for the classes above it (see
// Class): a call of a class takes a slot only while the slots taken are below the limit less
// what its class's ceiling holds back (ceiling.hold).
type ceilings struct {
	_     pad
	class [ClassesCeiling]ceiling
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
	kept atomic.Int64 // the never-lent parts of the reserves above the class
	room atomic.Int64 // what the classes above it took back lately: at most ceilings.lent
	most atomic.Int64 // the most that calls turned away take back from it in the window: see takeBack
	shut atomic.Int64 // closes<<32 | a limit at which the classes below it are shut (turnedAway)
	c    int          // the class
}

// hold returns what the class may not take of the limit. It is 0 for the highest class.
func (ce *ceiling) hold() int64 { return ce.kept.Load() + ce.room.Load() }

// hold returns what class c may not take of the limit.
func (cl *ceilings) hold(c int) int64 { return cl.class[c].hold() }

// keep sets the never-lent parts of the reserves above class c, for the goroutine that sets
// the limit.
func (cl *ceilings) keep(c int, n int64) {
	if k := &cl.class[c].kept; k.Load() != n {
		k.Store(n)
	}
}

// turnedAway holds one more slot back from each of the classes below the class of ce, its
// ceiling, of classes, where it holds back less than its most (takeBack: the lent slots,
// ceilings.lent, or fewer after a window with calls turned away), at which a class is shut: a
// call of the class was turned away for want of a slot. A shut class keeps
// the never-lent parts of its own reserve and of those below it: holding back more would take
// no slot that a class above may not take already, and would only make the closes that lend
// again take longer to give a slot back. A class shut stays so whatever more calls are turned
// away, so that steady overload writes nothing here; and once every class below is shut at a
// limit, the class's word of shut says so (shutAt), so that a call of the class turned away
// under that limit or a lower one reads that word rather than each class's, and makes no call
// here. The lowest class has no class below it: its word says so at every limit.
//
// Only a window's close lowers what is held back (lowering), or moves the limit and with it
// the lent slots, and it writes every class's word of shut with its count of closes before it
// lowers anything and again after: while it runs the count is odd, and no word says shut or
// may be made to. A word is made to say shut by a compare-and-swap from its value read before
// the classes below, where that value's count is even, and the swap fails where a close began
// since: so a word that says shut says that every class below had the lent slots taken back
// after the last close ended, and no close has begun lowering them since. Skipping them then
// changes nothing, and a limit above the word's takes the steps again. One call would have to
// stop between two of its steps for 2^31 closes to be misled by the count's wrapping around.
func (cl *ceilings) turnedAway(ce *ceiling, classes int, limit int64) {
	s := ce.shut.Load()
	if cl.takeBack(ce.c, classes) {
		ce.markShut(limit, s)
	}
}

// takeBack takes one more slot back from each class below class c, of classes, from which
// less than its most are taken back, and reports whether they all are from each now. A class's
// most is the lent slots, and after a window in which the classes above it turned calls away,
// at most needFactor times the slots they lacked in it (windowClosed): in sustained overload,
// what they take back within a window is bounded by what they needed in the last one rather
// than by how many of their calls are turned away in this one.
func (cl *ceilings) takeBack(c, classes int) (shut bool) {
	lent := cl.lent.Load()
	shut = true
	var most int64
	for d := c + 1; d < classes; d++ {
		r := &cl.class[d].room
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
// where it still holds s, read before takeBack found them so, and s was not written while a
// close lowered them: where no close began since, nor ran then.
func (ce *ceiling) markShut(limit, s int64) {
	if s>>32&1 == 0 {
		ce.shut.CompareAndSwap(s, s&^math.MaxUint32|limit)
	}
}

// shutAt reports whether the class's word of shut says that the classes below it are shut
// at limit, so that a call of the class turned away takes nothing back (turnedAway).
func (ce *ceiling) shutAt(limit int64) bool { return uint32(limit) <= uint32(ce.shut.Load()) }

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
		cl.class[c].shut.Store(n << 32)
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
// away raises the class above before class c (takeBack), so a raise of the one this read
// missed is either seen by the compare-and-swap, which then fails, or comes after it and
// raises class c too.
func (cl *ceilings) lower(c int, to func(v int64) int64) {
	r := &cl.class[c].room
	for {
		v := r.Load()
		t := to(v)
		if c > 0 {
			t = max(t, cl.class[c-1].room.Load())
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
// most needFactor times that (takeBack). It runs as the window closes, in the goroutine that closes it,
// with the window's samples and the most calls in flight that they saw.
func (cs *classSet) windowClosed(samples uint64, maxInFlight int) {
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
			waiting += cs.queues[c].count.Load()
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
// turnedAway still takes back one slot per call, up to the class's most (takeBack), so a
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
