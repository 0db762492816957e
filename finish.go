package adaptivelimit

import (
	"math"

	"github.com/resilience4cata/adaptivelimit/internal/clock"
)

// untimed is the start of a call that is not timed: no reading is after it, so the call's
// latency is 0.
const untimed = math.MaxInt64

// done finishes p with the call's outcome: it frees the slot and, unless err says nothing
// about load, adds the call to the window as a sample, closing the window if it is over.
// A drop of 1 makes the sample a drop whatever err is: the caller has classified the call.
// The slot is freed before the sample is added, so finishing a permit twice panics without
// adding one; the clock is read before the slot is freed, so the sample does not time that.
func (l *Limiter) done(p ticket, err error, drop uint64) {
	if err != nil {
		if l.dropOn(p, err) {
			l.drop(p)
		} else {
			l.ignore(p)
		}
		return
	}
	// The P is pinned before the slot is freed, so that between freeing it and the next call's
	// taking one there is as little as possible: another processor would take the line.
	var now int64
	var s *stripe
	var own bool
	if l.src.kind == sourceTicks {
		s, own = l.stripes.pin()
		now = clock.Ticks() // as in started
	} else {
		now = l.nowHolding(p) // a Clock may block, so it is read before the P is pinned
		s, own = l.stripes.pin()
	}
	var held bool
	if l.classes == nil && l.toShared(own, p.grant) {
		held = l.slots.release() // release's first case: release is beyond the inlining budget
	} else {
		held = l.release(s, own, p)
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
	// One compare finds both a window that is over and a clock that stepped back before the
	// window's start: now lies in [end-windowUnits, end) while neither happened.
	if uint64(l.window.end.Load()-1-now) >= uint64(l.windowUnits) {
		l.closeWindow(now)
	}
}

// drop finishes p as a drop, whatever its error: a sample, or none where noteDrop leaves the
// drop out.
func (l *Limiter) drop(p ticket) {
	if l.noteDrop(p.start) {
		l.ignore(p)
		return
	}
	l.done(p, nil, 1)
}

// cancel frees p's slot without a sample.
func (l *Limiter) cancel(p ticket) {
	l.free(p)
	l.outcomes.cancelled.Add(1)
}

// ignore frees the slot of a call whose outcome says nothing about load, and counts it. It
// counts after the free, which panics for a permit finished twice.
func (l *Limiter) ignore(p ticket) {
	l.free(p)
	l.outcomes.ignored.Add(1)
}

// free frees the slot of p, panics if it was not held, and passes it on to a waiter if any.
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

// unhold frees the slot of p, and reports whether it was held.
func (l *Limiter) unhold(p ticket) bool {
	s, own := l.stripes.pin()
	held := l.release(s, own, p)
	procUnpin()
	return held
}

// release frees the slot of p, a call that finished on the P of s, to which the goroutine is
// pinned and which owns s or not: the one path of every slot freed. A slot that was not held
// makes it report false, leaving every count as it was.
//   - A classed call counts itself by class as freeing its slot before it frees it
//     (stripes.held says why), and takes the count back where the slot was not held.
//   - Where toShared says so, the slot goes back to taken; else through the P's cache
//     (releaseLeased).
func (l *Limiter) release(s *stripe, own bool, p ticket) (held bool) {
	var released *uint64
	if l.classes != nil {
		released = &l.classes.stripe(s.i).released[p.grant.class&(MaxClasses-1)] // the mask spares a bounds check
		add(released, 1, own)
	}
	if l.toShared(own, p.grant) {
		held = l.slots.release()
	} else {
		held = l.releaseLeased(s, own, p.grant.leased)
	}
	if !held && released != nil {
		add(released, ^uint64(0), own)
	}
	return held
}

// toShared reports whether a call that finished on a P, which owns its stripe or not, frees
// its slot in taken alone: it was not leased, and leases are off or the P keeps no cache.
func (l *Limiter) toShared(own bool, g grant) bool {
	return !l.leases || !g.leased && (!own || l.slots.lease.Load()&leaseOn == 0)
}

// dropOn reports whether DropOn takes err for a drop. A DropOn that panics frees the slot
// of p, and the panic goes on.
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

// elapsed is the latency of a call that started at start and ended at now, in clock units:
// 0 for an untimed call, and for one whose end reads before its start, as the tick counters
// of two processors may disagree by a few ticks.
func elapsed(start, now int64) uint64 {
	if now > start {
		return uint64(now - start)
	}
	return 0
}

func panicFinishedTwice() {
	panic("adaptivelimit: permit finished twice: more slots released than were taken")
}
