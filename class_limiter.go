package adaptivelimit

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/resilience4cata/adaptivelimit/internal/clock"
)

// AcquireClass takes a slot for a call of the priority class called name, as Acquire does,
// where the slots taken are below the class's ceiling (see Class); otherwise it returns the
// limiter's *LimitExceededError at once. A name that Config.Classes does not list means the
// lowest class, and is counted in Snapshot.UnknownClass unless it is "". On a limiter without
// classes it is Acquire.
//
// AcquireClass panics on a nil or zero Limiter.
func (l *Limiter) AcquireClass(name string) (Permit, error) {
	if l == nil {
		panicUnusable()
	}
	if l.mode != classed {
		return l.Acquire()
	}
	// A call that finds every slot below its ceiling held is rejected as Acquire rejects,
	// before anything else; the rest is Acquire's steps, with takeClass for take.
	cs := l.classes
	ce := cs.same(name) // the class's ceiling, by index's first step, written out
	if ce == nil {
		ce = &cs.ceilings.class[cs.lookup(name)]
	}
	hold, c := ce.hold(), ce.c
	if l.slots.allHeld(hold) && !cs.dryRun {
		if l.heldBackIdle(ce) && l.closeIdle() {
			return l.AcquireClass(name) // the close may have lent the class a slot
		}
		// rejectClass, written out: in steady overload, where the classes below are shut
		// already, the rejection makes no call but its count's pin, as Acquire's.
		if limit := l.slots.limit.Load(); !ce.shutAt(limit) {
			cs.ceilings.turnedAway(ce, len(cs.names), limit)
		}
		if p := uintptr(procPin()); p < uintptr(len(cs.counts)) {
			bump(&cs.counts[p].rejected[c&(ClassesCeiling-1)], 1) // c is a class: the mask spares a bounds check
		} else {
			atomic.AddUint64(&cs.overflow.rejected[c], 1)
		}
		procUnpin()
		return Permit{}, l.rejection
	}
	var n int64
	counted := false
	switch {
	case l.leases:
		// take's first step, written out as Acquire writes it, with the count by class in its
		// pin: a call that gets its slot makes no call to take it. A dry run takes no lease.
		s, own := l.stripes.pin()
		if w := l.slots.lease.Load(); w&cachedFlag != 0 {
			n, counted = l.takeLeased(s, own, w, hold), true
		} else {
			n = l.slots.takeShared(hold)
		}
		if n != 0 {
			add(&s.class.acquired[c&(ClassesCeiling-1)], 1, own) // after the slot is taken: see classSet.inFlight
		}
		procUnpin()
	case cs.dryRun:
		n = l.takeUnenforcedClass(c) // at least 1
	default:
		// Without leases (one P when New ran) the call takes its slot as a classless one does,
		// and counts itself on the shared overflow line (countShared), which costs it less than
		// pinning its P.
		if n = l.slots.takeOne(hold); n != 0 {
			cs.countShared(c)
		}
	}
	if n == 0 {
		var freed bool
		if n, counted, freed = l.takeRest(c, hold); freed {
			l.passOn()
		}
		if n == 0 {
			if l.heldBackIdle(ce) && l.closeIdle() {
				return l.AcquireClass(name)
			}
			return l.rejectClass(ce)
		}
	}
	p := ticket{l: l, start: untimed, inFlight: permitCount(n, c), counted: counted}
	if l.timed() {
		if l.src.kind == sourceTicks {
			p.start = clock.Ticks() // as in Acquire
		} else {
			p.start = l.nowHolding(p)
		}
	}
	return Permit{ticket: p}, nil
}

// Classes returns the names of the limiter's priority classes (Config.Classes), highest
// first, in a slice of the caller's own; nil without classes. It panics on a nil or zero
// Limiter.
func (l *Limiter) Classes() []string {
	l.checkUsable()
	if l.mode != classed {
		return nil
	}
	return slices.Clone(l.classes.names)
}

// takeClass takes a slot for a call of class c from the limiter's slots (lease.go), where the
// slots taken are below the limit less hold, what the class's ceiling holds back, and
// returns its permit's inFlight, or 0; counted and freed as take says. It serves waiters, off
// the path of a call that finds a slot free (AcquireClass).
func (l *Limiter) takeClass(c int, hold int64) (f int64, counted, freed bool) {
	n, counted, freed := l.takeRest(c, hold)
	if n == 0 {
		return 0, false, freed
	}
	return permitCount(n, c), counted, freed
}

// takeRest is take for a call of class c, counting it by class where it gets its slot: all
// of take for a waiter, and its steps after the first for AcquireClass.
func (l *Limiter) takeRest(c int, hold int64) (n int64, counted, freed bool) {
	if n, counted, freed = l.take(hold); n != 0 {
		l.countAcquired(c)
	}
	return n, counted, freed
}

// takeUnenforcedClass takes a slot for class c whatever its ceiling in a dry run, counting a
// rejection where the ceiling is reached, and returns the calls in flight with it.
func (l *Limiter) takeUnenforcedClass(c int) int64 {
	n := l.slots.take()
	if n > l.slots.limit.Load()-l.classes.ceilings.hold(c) {
		l.turnAway(&l.classes.ceilings.class[c])
		l.classes.countRejected(c)
	}
	l.countAcquired(c)
	return max(n, 1)
}

// rejectClass rejects a call of the class of ce, its ceiling: it counts the rejection by
// class, and lowers the ceilings of the classes below (turnAway).
func (l *Limiter) rejectClass(ce *ceiling) (Permit, error) {
	l.turnAway(ce)
	l.classes.countRejected(ce.c)
	return Permit{}, l.rejection
}

// heldBackIdle reports whether slots that the classes above the class of ce, its ceiling,
// took back lie free: the slots taken are below the limit less the never-lent parts above the
// class, and something is taken back from it. A call of the class that finds no slot then
// closes the window where it is over (closeIdle). In steady overload every slot is taken, and
// at a ceiling of never-lent parts alone nothing is taken back: neither reads the clock.
func (l *Limiter) heldBackIdle(ce *ceiling) bool {
	return ce.room.Load() != 0 && l.slots.taken.Load() < l.slots.limit.Load()-ce.kept.Load()
}

// closeIdle closes the window where it is over, for a call that found no slot while slots
// that the classes above its class took back lie free (heldBackIdle), and reports whether the
// window closed, so that the call tries again below the ceiling that the close left it. Only
// a window's close lends those slots again, and a window closes as a call finishes: where
// none is in flight, or none finishes, a close of this call's is the only one. So what the
// classes above took back is lent again within two windows of the last call they turned away,
// with calls finishing or not (see Class).
//
//go:noinline
func (l *Limiter) closeIdle() bool {
	now := l.src.now()
	if uint64(l.window.end.Load()-1-now) < uint64(l.windowUnits) {
		return false // the window is not over, and the clock not before its start
	}
	closes := l.classes.ceilings.closes.Load()
	l.closeWindow(now) // as done closes it
	return l.classes.ceilings.closes.Load() != closes
}

// turnAway lowers the ceilings of the classes below the class of ce, its ceiling, where its
// word of shut does not say that they are shut at the limit: a call of the class found no
// slot.
func (l *Limiter) turnAway(ce *ceiling) {
	if limit := l.slots.limit.Load(); !ce.shutAt(limit) {
		l.classes.ceilings.turnedAway(ce, len(l.classes.names), limit)
	}
}

// acquireClassContext is AcquireContext for a classed limiter: for the context's class, and
// where Config.MaxWait is set, waiting behind the callers of its class and of the higher ones.
func (l *Limiter) acquireClassContext(ctx context.Context) (Permit, error) {
	name, _ := ClassFromContext(ctx) // no class, "", is the lowest
	if l.cfg.MaxWait == 0 || l.classes.dryRun {
		return l.AcquireClass(name)
	}
	c := l.classes.index(name)
	if l.wait.count.Load() == 0 {
		f, counted, freed := l.takeClass(c, l.classes.ceilings.hold(c))
		if freed {
			l.passOn()
		}
		if f != 0 {
			return l.started(f, counted), nil
		}
	}
	if ce := &l.classes.ceilings.class[c]; l.heldBackIdle(ce) && l.closeIdle() {
		return l.acquireClassContext(ctx) // the close may have lent the class a slot
	}
	w := l.enqueueClass(c)
	if w == nil {
		return l.rejectClass(&l.classes.ceilings.class[c])
	}
	l.turnAway(&l.classes.ceilings.class[c]) // a caller that waits was turned away too
	return l.waitFor(ctx, w)
}

// releaseClass is release for p, a classed permit: it counts the call by class as freeing
// its slot before it frees it, so that a class's count is never above the truth, and takes
// the count back where the slot was not held. It is release's steps, written out as done
// writes them.
func (l *Limiter) releaseClass(s *stripe, own bool, p ticket) (held bool) {
	released := &s.class.released[classOf(p.inFlight)]
	add(released, 1, own)
	if l.releasesShared(own, p.counted) {
		held = l.slots.release()
	} else {
		held = l.releaseLeased(s, own, p.counted)
	}
	if !held {
		add(released, ^uint64(0), own)
	}
	return held
}
