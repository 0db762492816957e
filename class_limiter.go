package adaptivelimit

import (
	"context"
	"slices"
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
	return l.acquireClass(l.classes.index(name))
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

// acquireClass is AcquireClass for class c of a classed limiter. A call that finds every slot
// below its ceiling held is rejected as Acquire rejects, before anything else.
func (l *Limiter) acquireClass(c int) (Permit, error) {
	cs := l.classes
	if l.slots.allHeld(cs.ceilings.hold(c)) && !cs.dryRun {
		return l.rejectClass(c)
	}
	if cs.dryRun {
		return l.startedClass(l.takeUnenforcedClass(c), false), nil
	}
	f, counted, freed := l.takeClass(c)
	if freed {
		l.passOn()
	}
	if f == 0 {
		return l.rejectClass(c)
	}
	return l.startedClass(f, counted), nil
}

// takeClass takes a slot for a call of class c from the limiter's slots (lease.go), where the
// slots taken are below the class's ceiling, and returns its permit's inFlight, or 0; counted
// and freed as take says.
func (l *Limiter) takeClass(c int) (f int64, counted, freed bool) {
	hold := l.classes.ceilings.hold(c)
	if l.slots.allHeld(hold) {
		return 0, false, false // as Acquire rejects: three loads, two compares
	}
	n, counted, freed := l.take(hold)
	if n == 0 {
		return 0, false, freed
	}
	l.countAcquired(c)
	return permitCount(n, c), counted, freed
}

// takeUnenforcedClass takes a slot for class c whatever its ceiling in a dry run, counting a
// rejection where the ceiling is reached, and returns its permit's inFlight.
func (l *Limiter) takeUnenforcedClass(c int) int64 {
	n := l.slots.take()
	if n > l.slots.limit.Load()-l.classes.ceilings.hold(c) {
		l.turnAway(c)
		l.countRejected(c, true)
	}
	l.countAcquired(c)
	return permitCount(max(n, 1), c)
}

// rejectClass rejects a call of class c, and lowers the ceilings of the classes below it.
func (l *Limiter) rejectClass(c int) (Permit, error) {
	if c < len(l.classes.names)-1 {
		l.turnAway(c)
	}
	l.countRejected(c, true)
	return Permit{}, l.rejection
}

// turnAway lowers the ceilings of the classes below class c: a call of c found no slot.
func (l *Limiter) turnAway(c int) {
	cs := l.classes
	cs.ceilings.turnedAway(c, len(cs.names), l.slots.limit.Load())
}

// acquireClassContext is AcquireContext for a classed limiter: for the context's class, and
// where Config.MaxWait is set, waiting behind the callers of its class and of the higher ones.
func (l *Limiter) acquireClassContext(ctx context.Context) (Permit, error) {
	name, _ := ClassFromContext(ctx)
	c := l.classes.index(name) // no class, "", is the lowest
	if l.cfg.MaxWait == 0 || l.classes.dryRun {
		return l.acquireClass(c)
	}
	if l.wait.count.Load() == 0 {
		f, counted, freed := l.takeClass(c)
		if freed {
			l.passOn()
		}
		if f != 0 {
			return l.startedClass(f, counted), nil
		}
	}
	w := l.enqueueClass(c)
	if w == nil {
		return l.rejectClass(c)
	}
	l.turnAway(c) // a caller that waits was turned away too
	return l.waitFor(ctx, w)
}

// doneClass is done for a classed limiter. The slot is freed before DropOn or a Clock that
// may panic runs, so that a panic leaves nothing held; a clock that cannot panic is read
// before, so that the sample does not time the release, and a call with no error adds its
// sample while its P is pinned to free the slot.
func (l *Limiter) doneClass(p ticket, err error, drop uint64) {
	var now int64
	timed := l.src.kind != sourceOther
	if timed {
		now = l.src.now()
	}
	s, cc, own := l.pinClass()
	held := l.releaseClass(s, cc, own, p)
	sampled := held && err == nil && timed
	if sampled {
		addSampleOn(s, own, elapsed(p.start, now), drop, peakMark(l.window.id.Load(), p.inFlight&countMask))
	}
	procUnpin()
	if !held {
		panicFinishedTwice() // unpinned: the runtime does not let a pinned goroutine panic
	}
	l.passOn()
	if !sampled {
		if err != nil {
			if !l.cfg.DropOn(err) {
				l.outcomes.ignored.Add(1)
				return
			}
			drop = 1
			l.noteDrop(p.start)
		}
		if !timed {
			now = l.src.now()
		}
		s, own := l.stripes.pin()
		addSampleOn(s, own, elapsed(p.start, now), drop, peakMark(l.window.id.Load(), p.inFlight&countMask))
		procUnpin()
	}
	if uint64(l.window.end.Load()-1-now) >= uint64(l.windowUnits) {
		l.closeWindow(now)
	}
}

// addSampleOn adds a sample to s, the stripe of the P the goroutine is pinned to, which it
// owns or not.
func addSampleOn(s *stripe, own bool, latency, drop, peak uint64) {
	if own {
		addSample(s, latency, drop, peak)
	} else {
		addSampleAtomic(s, latency, drop, peak)
	}
}

// releaseClass frees the slot of p, a classed permit, on the P of s and cc, to which the
// goroutine is pinned, counting the call as freeing it before, so that a class's count is
// never above the truth. A slot that was not held makes it report false, leaving the counts
// as they were.
func (l *Limiter) releaseClass(s *stripe, cc *classStripe, own bool, p ticket) (held bool) {
	c := classOf(p.inFlight)
	add(&cc.released[c], 1, own)
	if held = l.release(s, own, p.counted); !held {
		add(&cc.released[c], ^uint64(0), own)
	}
	return held
}

// ignoreClass is ignore for a classed permit.
func (l *Limiter) ignoreClass(p ticket) {
	l.freeClass(p)
	l.outcomes.ignored.Add(1)
}

// freeClass frees the slot of a classed permit, and passes it on to a waiter if any. It
// panics if the slot was not held.
func (l *Limiter) freeClass(p ticket) {
	s, cc, own := l.pinClass()
	held := l.releaseClass(s, cc, own, p)
	procUnpin()
	if !held {
		panicFinishedTwice()
	}
	l.passOn()
}
