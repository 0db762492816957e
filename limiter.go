package adaptivelimit

import (
	"math"
	"runtime"
	"sync/atomic"

	"github.com/resilience4cata/adaptivelimit/internal/clock"
)

// Limiter caps how many calls run at once, and moves the cap after every window: up while
// latency holds, down when it rises or calls are dropped. A full limiter rejects at once, or,
// where Config.MaxWait is set, lets callers of AcquireContext wait for a slot.
//
// A Limiter is safe for concurrent use. Create one with New: every method of a nil or zero
// Limiter, and Do with one, panics with "adaptivelimit: nil or zero *Limiter". A Limiter must
// not be copied.
type Limiter struct {
	slots  slots
	window windowState
	wait   waitQueue

	outcomes outcomes // calls finished without a sample (counters.go)

	// Read by every call, written only by New.
	stripes     stripes
	src         source
	mode        mode        // Disabled and DryRun, in one compare for Acquire
	timing      atomic.Bool // calls are timed (timed); AIMD's from its first departure on
	leases      bool        // calls of mode leasing, or classed and enforcing, use per-P caches of slots (lease.go)
	classes     *classSet   // with Config.Classes (classes.go)
	rejection   *LimitExceededError
	windowUnits int64

	// Owned by the goroutine that holds closing.
	closing    atomic.Bool
	algorithm  algorithm
	read       totals // what the last closed window read from the stripes
	published  published
	departures departures
	// Written by a window's close, read by departures: how long a departure must have run
	// to be a drop, in clock units, or 0 for none (depart.go).
	departAfter atomic.Int64
	departed    departed // the departures that were no drop (depart.go)
	exact       float64  // the ExactLimit in force (pace.go)

	cfg Config

	// Written only where GOMAXPROCS grew after New, by the Ps beyond the stripes.
	_        pad
	overflow stripe
}

type mode uint8

const (
	enforcing mode = iota // with one shared count of slots
	leasing               // enforcing, with per-P caches of slots (lease.go)
	dryRun
	disabled
	classed // with priority classes, enforcing or in a dry run (classes.go)
)

// enforced reports whether the limiter rejects calls above the limit.
func (l *Limiter) enforced() bool { return l.mode <= leasing }

// New returns a limiter for c, or a *ConfigError naming the first invalid field.
func New(c Config) (*Limiter, error) {
	c, err := c.resolved()
	if err != nil {
		return nil, err
	}
	l := &Limiter{
		src:       newSource(c.Clock),
		rejection: newLimitExceededError(c.Name),
		algorithm: newAlgorithm(c),
		cfg:       c,
	}
	l.stripes = newStripes(&l.overflow)
	switch {
	case c.Disabled:
		l.mode = disabled
	case len(c.Classes) > 0:
		l.mode, l.classes = classed, newClassSet(c.Classes, c.DryRun, &l.stripes)
		l.leases = !c.DryRun && runtime.GOMAXPROCS(0) > 1
	case c.DryRun:
		l.mode = dryRun
	case runtime.GOMAXPROCS(0) > 1:
		l.mode, l.leases = leasing, true
	}
	l.windowUnits = l.src.units(c.Window)
	l.timing.Store(c.Algorithm != AIMD)
	l.exact = float64(l.setLimit(int64(c.InitialLimit)))
	l.window.end.Store(later(l.src.now(), l.windowUnits))
	return l, nil
}

// Acquire takes a slot, or returns the limiter's *LimitExceededError at once if the limit
// is full: it never waits. Finish the permit with Done or Cancel exactly once.
//
// Acquire panics on a nil or zero Limiter.
func (l *Limiter) Acquire() (Permit, error) {
	if l == nil {
		panicUnusable()
	}
	// The zero Limiter's limit is 0, so it takes this branch, and reject panics.
	if l.slots.allHeld(0) && l.enforced() {
		if l.slots.gap.Load() != 0 {
			return l.paced() // the limit is below 1 (pace.go)
		}
		return l.reject() // three loads, two compares, the pace's load and the count
	}
	var n int64
	counted := false
	switch l.mode {
	case enforcing:
		var ok bool
		if n, ok = l.slots.tryAcquire(0); !ok {
			return l.refuse()
		}
	case leasing:
		// take's first step, written out so that a call that gets its slot makes no call to
		// take: asking the shared count here and again in take made two goroutines' admitted
		// call at GOMAXPROCS 2 12-16% slower (bench/README.md).
		if w := l.slots.lease.Load(); w&cachedFlag != 0 {
			s, own := l.stripes.pin()
			n, counted = l.takeLeased(s, own, w, 0), true
			procUnpin()
		} else {
			n = l.slots.takeShared(0)
		}
		if n == 0 {
			var freed bool
			if n, counted, freed = l.take(0); freed {
				l.passOn()
			}
			if n == 0 {
				return l.refuse()
			}
		}
	case disabled:
		return Permit{}, nil // it measures nothing, so the permit needs no finishing
	case classed:
		return l.AcquireClass("") // the lowest class
	default:
		n = l.takeUnenforced()
	}
	p := ticket{l: l, start: untimed, inFlight: n, counted: counted}
	if l.timed() {
		if l.src.kind == sourceTicks {
			p.start = clock.Ticks() // the default clock, read without the call through now
		} else {
			p.start = l.nowHolding(p)
		}
	}
	return Permit{ticket: p}, nil
}

func (l *Limiter) reject() (Permit, error) {
	err := l.rejection
	if err == nil {
		panicUnusable() // the zero Limiter: before anything is pinned
	}
	l.stripes.reject()
	return Permit{}, err
}

// checkUsable panics on a nil or zero Limiter, which New never returns: for the methods off
// the call path, which take the time to say so rather than report a limit of 0.
func (l *Limiter) checkUsable() {
	if l == nil || l.rejection == nil {
		panicUnusable()
	}
}

func panicUnusable() {
	panic("adaptivelimit: nil or zero *Limiter: create limiters with New")
}

// takeUnenforced takes a slot whatever the limit in a dry run, counting a rejection where
// the limit is full, and returns the count in flight with it: at least 1, even while a
// permit finished twice holds the count below zero for a moment.
func (l *Limiter) takeUnenforced() int64 {
	n := l.slots.take()
	if n > l.slots.limit.Load() {
		l.stripes.reject()
	}
	return max(n, 1)
}

// nowHolding reads the clock for p, a call that holds a slot. A Clock that panics frees the
// slot, and the panic goes on.
func (l *Limiter) nowHolding(p ticket) int64 {
	if l.src.kind != sourceOther {
		return l.src.now()
	}
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

// abandon frees the slot of p, a call whose callback panicked, without a sample.
func (l *Limiter) abandon(p ticket) {
	if l.unhold(p) {
		l.passOn()
	}
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
		if !l.dropOn(p, err) {
			l.ignore(p)
			return
		}
		drop = 1
		l.noteDrop(p.start)
	}
	// The P is pinned before the slot is freed, so that between freeing it and the next call's
	// taking one there is as little as possible: another processor would take the line.
	var now int64
	var s *stripe
	var own bool
	if l.src.kind == sourceTicks {
		s, own = l.stripes.pin()
		now = clock.Ticks() // as in Acquire
	} else {
		now = l.nowHolding(p) // a Clock may block, so it is read before the P is pinned
		s, own = l.stripes.pin()
	}
	// release, inlined where no cache is involved (the one-P call's path), with
	// releaseClass's count for a classed permit
	var released *uint64
	if l.mode == classed {
		released = &s.class.released[classOf(p.inFlight)]
		add(released, 1, own)
	}
	var held bool
	if l.releasesShared(own, p.counted) {
		held = l.slots.release()
	} else {
		held = l.releaseLeased(s, own, p.counted)
	}
	if !held && released != nil {
		add(released, ^uint64(0), own)
	}
	if held {
		latency, peak := elapsed(p.start, now), peakMark(l.window.id.Load(), p.inFlight&countMask)
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

// cancel frees p's slot without a sample.
func (l *Limiter) cancel(p ticket) {
	l.free(p)
	l.countCancelled()
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

// timed reports whether calls are timed: AIMD uses no latency, so its calls read the clock
// once, at the end, until a departure needs to know how long a call ran (depart.go).
func (l *Limiter) timed() bool { return l.timing.Load() }

// Limit returns how many calls may run at once now: 1 while the limit is below 1, which
// admits one call at a time at a pace (Config.SubUnitFloor; Snapshot.ExactLimit).
func (l *Limiter) Limit() int {
	l.checkUsable()
	return int(max(l.slots.limit.Load(), 1)) // 0 only while paced (pace.go)
}

// InFlight returns how many calls hold a slot now. While calls start and finish beside it,
// it may count fewer, never more.
func (l *Limiter) InFlight() int {
	l.checkUsable()
	if l.leases && l.slots.lease.Load() > leaseOn {
		return int(max(l.stripes.held(), 0)) // a cache may hold idle slots: see lease.go
	}
	return int(l.slots.taken.Load())
}
