package adaptivelimit

import (
	"math"

	"github.com/resilience4cata/adaptivelimit/internal/clock"
)

// untimed is an untimed call's start: no reading is after it, so its latency is 0 (elapsed).
const untimed = math.MaxInt64

// done frees p's slot and, unless err says nothing about load, adds a sample (a drop where the
// caller set drop) and closes the window if over. The clock is read before the free, so the
// sample does not time it; the sample comes after, so a second finish panics without adding one.
func (l *Limiter) done(p ticket, err error, drop uint64) {
	if err != nil {
		if l.dropOn(p, err) {
			l.drop(p)
		} else {
			l.ignore(p)
		}
		return
	}
	// Pinned before the free, so the next take finds the line still ours (bench/README.md).
	var now int64
	var s *stripe
	var own bool
	if l.src.kind == sourceTicks {
		s, own = l.stripes.pin()
		now = clock.Ticks() // as in startOf
	} else {
		now = l.nowHolding(p) // a Clock may block, so it is read before the P is pinned
		s, own = l.stripes.pin()
	}
	// release, written out as the compiler does not inline it (TestDoneWritesOutRelease): as
	// a call, a classed free cost 25 instructions more, a leased one 36.
	var held bool
	if !l.toShared(own, p.grant) {
		released := l.countFree(s, own, p.grant)
		if held = l.releaseLeased(s, own, p.grant.leased()); !held && released != nil {
			add(released, ^uint64(0), own)
		}
	} else if l.classes == nil {
		held = l.slots.release()
	} else {
		released := l.countFree(s, own, p.grant)
		if held = l.slots.release(); !held {
			add(released, ^uint64(0), own)
		}
	}
	if held {
		latency, peak := elapsed(p.start, now), peakMark(l.window.id.Load(), p.inFlight)
		if own {
			addSample(s, latency, drop, peak)
		} else {
			addSampleAtomic(s, latency, drop, peak)
		}
	}
	procUnpin()
	if !held {
		panicFinishedTwice() // unpinned: the runtime does not let a pinned goroutine panic
	}
	l.passOn() // unpinned: serving waiters takes a lock
	// One compare: a window over, or a clock stepped back, puts now outside [end-windowUnits, end).
	if uint64(l.window.end.Load()-1-now) >= uint64(l.windowUnits) {
		l.closeWindow(now)
	}
}

// drop finishes p as a drop whatever its error: a sample, unless noteDrop leaves it out.
func (l *Limiter) drop(p ticket) {
	if l.noteDrop(p.start) {
		l.ignore(p)
		return
	}
	l.done(p, nil, 1)
}

func (l *Limiter) cancel(p ticket) {
	l.free(p)
	l.outcomes.cancelled.Add(1)
}

// ignore frees a slot without a sample and then counts it: the free panics on a second finish.
func (l *Limiter) ignore(p ticket) {
	l.free(p)
	l.outcomes.ignored.Add(1)
}

func (l *Limiter) free(p ticket) {
	if !l.unhold(p) {
		panicFinishedTwice() // unpinned: the runtime does not let a pinned goroutine panic
	}
	l.passOn()
}

// abandon frees the slot of p, a call whose callback panicked, without a sample.
func (l *Limiter) abandon(p ticket) {
	if l.unhold(p) {
		l.passOn()
	}
}

func (l *Limiter) unhold(p ticket) bool {
	s, own := l.stripes.pin()
	held := l.release(s, own, p.grant)
	procUnpin()
	return held
}

// release frees the slot of a call granted g on s's P (pinned; own: it owns s): to taken where
// toShared says so, else via releaseLeased. A slot not held reports false, every count
// unchanged. Cancel, an ignored outcome and a waiter that gives up free through it; done
// writes it out.
func (l *Limiter) release(s *stripe, own bool, g grant) (held bool) {
	released := l.countFree(s, own, g)
	if l.toShared(own, g) {
		held = l.slots.release()
	} else {
		held = l.releaseLeased(s, own, g.leased())
	}
	if !held && released != nil {
		add(released, ^uint64(0), own)
	}
	return held
}

// countFree counts the free of a classed call granted g on s's P, before the free (stripes.held
// says why), and returns the counter for an undo where the slot was not held; nil without classes.
func (l *Limiter) countFree(s *stripe, own bool, g grant) *uint64 {
	if l.classes == nil {
		return nil
	}
	released := &l.classes.stripe(s.i).released[g.class()&(MaxClasses-1)] // the mask spares a bounds check
	add(released, 1, own)
	return released
}

// toShared reports whether the slot goes to taken alone: not leased, and leaseOn off or no own P.
func (l *Limiter) toShared(own bool, g grant) bool {
	return !l.leases || !g.leased() && (!own || l.slots.lease.Load()&leaseOn == 0)
}

// dropOn reports whether DropOn takes err for a drop; a DropOn that panics frees p's slot first.
func (l *Limiter) dropOn(p ticket, err error) bool {
	ok := false
	defer func() {
		if !ok {
			l.abandon(p)
		}
	}()
	drop := l.cfg.DropOn(err)
	ok = true
	return drop
}

// elapsed is the latency from start to now in clock units: 0 for an untimed call, and where
// now reads before start, as two processors' tick counters may disagree by a few ticks.
func elapsed(start, now int64) uint64 {
	if now > start {
		return uint64(now - start)
	}
	return 0
}

func panicFinishedTwice() {
	panic("adaptivelimit: permit finished twice: more slots released than were taken")
}
