package adaptivelimit

import (
	"slices"
	"sync/atomic"

	"github.com/resilience4cata/adaptivelimit/internal/clock"
)

// Acquire takes a slot, or returns the limiter's *LimitExceededError at once if the limit
// is full: it never waits. On a limiter with classes the call is of the lowest class. Finish
// the permit with Done or Cancel exactly once. Acquire panics on a nil or zero Limiter.
func (l *Limiter) Acquire() (Permit, error) {
	if l == nil {
		panicUnusable()
	}
	return l.acquire(l.lowest)
}

// AcquireClass takes a slot for a call of the priority class called name, as Acquire does,
// where the slots taken are below the class's ceiling (see Class); otherwise it returns the
// limiter's *LimitExceededError at once. A name that Config.Classes does not list means the
// lowest class, and is counted in Snapshot.UnknownClass unless it is "". On a limiter without
// classes it is Acquire. AcquireClass panics on a nil or zero Limiter.
func (l *Limiter) AcquireClass(name string) (Permit, error) {
	if l == nil {
		panicUnusable()
	}
	cs := l.classes
	if cs == nil {
		return l.acquire(nil)
	}
	ce := cs.same(name) // named, inlined by hand as the compiler does not
	if ce == nil {
		ce = &cs.ceilings.class[cs.lookup(name)]
	}
	return l.acquire(ce)
}

// Classes returns the names of the limiter's priority classes (Config.Classes), highest first,
// in a slice of the caller's own; nil without classes. It panics on a nil or zero Limiter.
func (l *Limiter) Classes() []string {
	l.checkUsable()
	if l.classes == nil {
		return nil
	}
	return slices.Clone(l.classes.names)
}

// acquire takes a slot for a call of ce's class (nil: no classes) without waiting; every take
// but a waiter's comes here. It writes out acquireAny's steps for an enforced call taken or
// rejected at once (TestAcquireWritesOutItsSteps), as done writes out release: with every slot
// below its ceiling held and none heldBackIdle, reject's, first, in three loads and two
// compares (and without classes a test of limit 0); else takeFirst's.
func (l *Limiter) acquire(ce *ceiling) (Permit, error) {
	// The classless rejection first: on its path the compiler then saves nothing on the stack
	// for the rest of the call, which made it 8-9% slower (bench/README.md).
	if ce == nil && l.slots.allHeld(0) && l.enforce == enforced {
		// Limit 0: the zero Limiter (reject panics) or a paced one (pace.go).
		if err := l.rejection; l.slots.limit.Load() != 0 {
			l.stripes.reject()
			return Permit{}, err
		}
		return l.acquireAny(nil)
	}
	if l.enforce == enforced {
		var hold int64 // ce.hold(): 0 without classes
		if ce != nil {
			if hold = ce.hold(); l.slots.allHeld(hold) {
				if l.heldBackIdle(ce) {
					return l.acquireAny(ce)
				}
				// reject(ce), checked against it by TestAcquireWritesOutItsSteps: once the
				// classes below are shut, the rejection makes no call but its count's pin.
				cs := l.classes
				if limit := l.slots.limit.Load(); !ce.shutAt(limit) {
					cs.ceilings.turnedAway(ce, limit)
				}
				if p := uintptr(procPin()); p < uintptr(len(cs.counts)) {
					bump(&cs.counts[p].rejected[ce.c&(MaxClasses-1)], 1) // the mask spares a bounds check
				} else {
					atomic.AddUint64(&cs.overflow.rejected[ce.c], 1)
				}
				procUnpin()
				return Permit{}, l.rejection
			}
		}
		var n int64
		leased := false
		switch w := l.slots.lease.Load(); {
		case w&cachedFlag == 0 && (ce == nil || !l.leases):
			if n = l.slots.tryShared(w, hold); n > 0 && ce != nil {
				l.classes.countShared(ce.c)
			}
		case ce == nil: // takePinned's cached take
			s, own := l.stripes.pin()
			n, leased = l.takeLeased(s, own, w, hold), true
			procUnpin()
		default:
			n, leased = l.takePinned(ce, hold, w)
		}
		if n > 0 {
			p := ticket{l: l, start: untimed, inFlight: n, grant: newGrant(ce.index(), leased)}
			if l.timed() {
				if l.src.kind == sourceTicks {
					p.start = clock.Ticks() // startOf, inlined by hand as the compiler does not
				} else {
					p.start = l.nowHolding(p)
				}
			}
			return Permit{ticket: p}, nil
		}
	}
	return l.acquireAny(ce)
}

// acquireAny is acquire's general path. A classed call that finds no slot while held-back
// slots lie free (heldBackIdle) closes the window if over (closeIdle), lending them, and retries.
func (l *Limiter) acquireAny(ce *ceiling) (Permit, error) {
	for {
		var n int64
		var leased, freed bool
		switch l.enforce {
		case enforced:
			if n, leased, freed = l.take(ce); freed {
				l.passOn()
			}
		case dryRun:
			n = l.takeUnenforced(ce)
		default:
			return Permit{}, nil // disabled: it measures nothing, so the permit needs no finishing
		}
		if n != 0 {
			return l.started(n, leased, ce), nil
		}
		if ce == nil {
			if p, ok := l.admitPaced(); ok { // a limit below 1 admits at its pace (pace.go)
				return Permit{ticket: p}, nil
			}
			return Permit{}, l.reject(nil)
		}
		if !l.heldBackIdle(ce) || !l.closeIdle() {
			return Permit{}, l.reject(ce)
		}
	}
}

// started returns the permit of a call of ce's class that took a slot, n in flight: latency
// runs from now. acquireAny and a served waiter start through it.
func (l *Limiter) started(n int64, leased bool, ce *ceiling) Permit {
	p := ticket{l: l, start: untimed, inFlight: n, grant: newGrant(ce.index(), leased)}
	if l.timed() {
		p.start = l.startOf(p)
	}
	return Permit{ticket: p}
}

// startOf reads the clock as p, a call that holds a slot, starts: its latency runs from here.
func (l *Limiter) startOf(p ticket) int64 {
	if l.src.kind == sourceTicks {
		return clock.Ticks() // the default clock, read without the call through now
	}
	return l.nowHolding(p)
}

// reject counts a rejection, lowers the ceilings below ce (turnAway), and returns l.rejection.
func (l *Limiter) reject(ce *ceiling) error {
	err := l.rejection
	if err == nil {
		panicUnusable() // the zero Limiter: before anything is pinned
	}
	if ce != nil {
		l.turnAway(ce)
	}
	l.countRejection(ce)
	return err
}

// countRejection counts a rejection on its P's stripe, or by class only.
func (l *Limiter) countRejection(ce *ceiling) {
	if ce == nil {
		l.stripes.reject()
	} else {
		l.classes.countRejected(ce.c)
	}
}

// takeUnenforced takes a slot whatever the limit (dry run), counting a rejection past the
// ceiling, and returns the count in flight: at least 1, even while a double finish holds it < 0.
func (l *Limiter) takeUnenforced(ce *ceiling) int64 {
	n := l.slots.taken.Add(1)
	if n > l.slots.limit.Load()-ce.hold() {
		l.reject(ce) // a would-be rejection, counted as one
	}
	if ce != nil {
		l.countAcquired(ce.c)
	}
	return max(n, 1)
}

// nowHolding reads the clock for p, which holds a slot: nanotime first, the default where the
// tick counter is not a safe clock (a VM's kvm-clock), without now's switch or a deferred call.
func (l *Limiter) nowHolding(p ticket) int64 {
	if l.src.kind == sourceNanotime {
		return nanotime()
	}
	if l.src.kind != sourceOther {
		return l.src.now()
	}
	return l.nowGuarded(p)
}

// nowGuarded reads a Clock of the caller's for p, which holds a slot: one that panics frees it
// first.
func (l *Limiter) nowGuarded(p ticket) int64 {
	ok := false
	defer func() {
		if !ok {
			l.abandon(p)
		}
	}()
	now := l.src.clock.Nanotime()
	ok = true
	return now
}

// heldBackIdle reports whether slots the classes above took back from ce's class lie free:
// false, with no clock read, in steady overload (all taken) or at a never-lent-only ceiling.
func (l *Limiter) heldBackIdle(ce *ceiling) bool {
	return ce.takenBack.Load() != 0 && l.slots.taken.Load() < l.slots.limit.Load()-ce.neverLent.Load()
}

// closeIdle closes the window if over, for a call that found no slot while heldBackIdle, and
// reports whether the classes' part closed. Only a close lends those slots again, and windows
// close as calls finish: with none finishing, this call's or a waiter's (waitFor) is the only
// one, so they are lent again within two windows of the last turn-away either way (see Class).
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
