package adaptivelimit

import (
	"math"
	"runtime"
	"sync/atomic"
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

	outcomes outcomes // calls finished without a sample (outcome.go)

	// Read by every call, written only by New.
	stripes     stripes
	src         source
	enforce     enforcement
	leases      bool        // more than one P when New ran, enforced: Ps cache slots (slots.go)
	timing      atomic.Bool // calls are timed (timed); AIMD's from its first departure on
	classes     *classSet   // with Config.Classes (classes.go); nil without
	lowest      *ceiling    // the lowest class's ceiling, which Acquire takes for; nil without classes
	rejection   *LimitExceededError
	windowUnits int64

	// Owned by the goroutine that holds closing.
	closing   atomic.Bool
	algorithm algorithm
	schedule  scheduler // the algorithm, where it schedules its windows; nil otherwise (set by New)
	read      totals    // what the last closed window read from the stripes
	opened    int64     // clock units: where the window under way started
	// Set by a window's close, in clock units (math.MinInt64: none): a drop noted (noteDrop)
	// before the next close, of a call started before it, is left out (no sample).
	leftOut    atomic.Int64
	published  published
	departures departures
	// Set by a window's close: how long a departure must run to be a drop; 0: none (depart.go).
	departAfter atomic.Int64
	departed    departed // the departures that were no drop (depart.go)
	exact       float64  // the ExactLimit in force (pace.go)

	cfg Config

	// Written only where GOMAXPROCS grew after New, by the Ps beyond the stripes.
	_        pad
	overflow stripe
}

// enforcement is whether a limiter rejects the calls above its limit.
type enforcement uint8

const (
	enforced enforcement = iota
	dryRun               // admits every call, counting those it would have rejected
	disabled             // admits every call and measures nothing
)

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
		l.enforce = disabled
	case c.DryRun:
		l.enforce = dryRun
	default:
		l.leases = runtime.GOMAXPROCS(0) > 1
	}
	classes := 1
	if len(c.Classes) > 0 && !c.Disabled {
		l.classes = newClassSet(c.Classes, &l.stripes)
		l.lowest = &l.classes.ceilings.class[len(c.Classes)-1]
		classes = len(c.Classes)
	}
	l.wait.lists = make([]waitList, classes)
	l.windowUnits = l.src.units(c.Window)
	if s, ok := l.algorithm.(scheduler); ok {
		s.useClock(&l.src, l.windowUnits)
		l.schedule = s
	}
	l.leftOut.Store(math.MinInt64) // a clock's readings may be negative
	l.timing.Store(c.Algorithm != AIMD)
	l.exact = float64(l.setLimit(int64(c.InitialLimit)))
	l.opened = l.src.now()
	l.window.end.Store(later(l.opened, l.windowUnits))
	return l, nil
}

// checkUsable panics on a nil or zero Limiter: off the call path, rather than report limit 0.
func (l *Limiter) checkUsable() {
	if l == nil || l.rejection == nil {
		panicUnusable()
	}
}

func panicUnusable() {
	panic("adaptivelimit: nil or zero *Limiter: create limiters with New")
}

// timed reports whether calls are timed: AIMD uses no latency, so not until a departure needs
// a call's duration (depart.go).
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
		return int(max(l.stripes.held(), 0)) // a cache may hold idle slots: see slots.go
	}
	return int(l.slots.taken.Load())
}
