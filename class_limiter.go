package adaptivelimit

import (
	"context"
	"slices"
)

// AcquireClass takes a slot for a call of the priority class called name, as Acquire does: a
// free slot of the class's reserve, else a shared one, else one that a lower class reserves
// and no call of it holds; otherwise it returns the limiter's *LimitExceededError at once. A
// name that Config.Classes does not list means the lowest class, and is counted in
// Snapshot.UnknownClass unless it is "". On a limiter without classes it is Acquire.
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
	if l == nil || l.rejection == nil {
		panicUnusable()
	}
	if l.mode != classed {
		return nil
	}
	return slices.Clone(l.classes.names)
}

// acquireClass is AcquireClass for class c of a classed limiter.
func (l *Limiter) acquireClass(c int) (Permit, error) {
	cs := l.classes
	pool := cs.take(c)
	if pool < 0 {
		cs.rejected(c)
		if !cs.dryRun {
			return l.reject()
		}
		l.stripes.reject()
		pool = noPool
	}
	return l.startedClass(cs.admit(c, pool, l.slots.limit.Load())), nil
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
		if pool := l.classes.take(c); pool >= 0 {
			return l.startedClass(l.classes.admit(c, pool, l.slots.limit.Load())), nil
		}
	}
	w := l.enqueueClass(c)
	if w == nil {
		l.classes.rejected(c)
		return l.reject()
	}
	return l.waitFor(ctx, w)
}

// doneClass is done for a classed limiter. The slot goes back to its pool before DropOn or a
// Clock that may panic runs, so that a panic leaves nothing held; a clock that cannot panic
// is read before, so that the sample does not time the release.
func (l *Limiter) doneClass(p ticket, err error, drop uint64) {
	var now int64
	if l.src.kind != sourceOther {
		now = l.src.now()
	}
	n := l.freeClass(p.inFlight)
	if err != nil {
		if !l.cfg.DropOn(err) {
			l.outcomes.ignored.Add(1)
			return
		}
		drop = 1
	}
	if l.src.kind == sourceOther {
		now = l.src.now()
	}
	latency, peak := elapsed(p.start, now), peakMark(l.window.id.Load(), n)
	if s, own := l.stripes.pin(); own {
		addSample(s, latency, drop, peak)
	} else {
		addSampleAtomic(s, latency, drop, peak)
	}
	procUnpin()
	if uint64(l.window.end.Load()-1-now) >= uint64(l.windowUnits) {
		l.closeWindow(now)
	}
}

// ignoreClass is ignore for a classed permit whose inFlight is f.
func (l *Limiter) ignoreClass(f int64) {
	l.freeClass(f)
	l.outcomes.ignored.Add(1)
}

// freeClass frees the slot of a classed permit whose inFlight is f, passes it on to a waiter
// if any, and returns the count in flight the permit carried. It panics if the permit's class
// held no slot.
func (l *Limiter) freeClass(f int64) int64 {
	n, held := l.classes.release(f)
	if !held {
		panicFinishedTwice()
	}
	l.passOn()
	return n
}
