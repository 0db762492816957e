package adaptivelimit

import "sync/atomic"

// Limiter caps how many calls run at once, and moves the cap after every window: up while
// latency holds, down when it rises or calls are dropped. A full limiter rejects at once.
//
// A Limiter is safe for concurrent use. Create one with New; the zero Limiter is not usable,
// and a Limiter must not be copied.
type Limiter struct {
	slots  slots
	window windowState

	// Read by every call, written only by New.
	stripes     stripes
	src         source
	mode        mode // Disabled and DryRun, in one compare for Acquire
	rejection   *LimitExceededError
	windowUnits int64

	// Owned by the goroutine that holds closing.
	closing   atomic.Bool
	algorithm algorithm
	read      totals // what the last closed window read from the stripes
	published published

	cfg Config
}

type mode uint8

const (
	enforcing mode = iota
	dryRun
	disabled
)

// New returns a limiter for c, or a *ConfigError naming the first invalid field.
func New(c Config) (*Limiter, error) {
	c, err := c.resolved()
	if err != nil {
		return nil, err
	}
	l := &Limiter{
		stripes:   newStripes(),
		src:       newSource(c.Clock),
		rejection: newLimitExceededError(c.Name),
		algorithm: newAlgorithm(c),
		cfg:       c,
	}
	switch {
	case c.Disabled:
		l.mode = disabled
	case c.DryRun:
		l.mode = dryRun
	}
	l.windowUnits = l.src.units(c.Window)
	l.slots.limit.Store(int64(c.InitialLimit))
	l.window.end.Store(l.src.now() + l.windowUnits)
	return l, nil
}

// Acquire takes a slot, or returns the limiter's *LimitExceededError at once if the limit
// is full. Finish the permit with Done or Cancel exactly once.
func (l *Limiter) Acquire() (Permit, error) {
	if l.mode != enforcing {
		return l.acquireUnenforced(), nil
	}
	n, ok := l.slots.tryAcquire()
	if !ok {
		l.stripes.reject()
		return Permit{}, l.rejection
	}
	return l.permit(n), nil
}

func (l *Limiter) acquireUnenforced() Permit {
	if l.mode == disabled {
		return Permit{l: l}
	}
	n := l.slots.take()
	if n > l.slots.limit.Load() {
		l.stripes.reject()
	}
	return l.permit(n)
}

func (l *Limiter) permit(inFlight int64) Permit {
	p := Permit{l: l, inFlight: inFlight}
	if l.timed() {
		p.start = l.src.now()
	}
	return p
}

// finish frees p's slot and, if it is a sample, adds it to the window, closing the window
// if it is over.
func (l *Limiter) finish(p Permit, sample, drop bool) {
	if l.mode == disabled {
		return
	}
	if !sample {
		l.slots.release()
		return
	}
	now := l.src.now()
	l.slots.release()
	var latency uint64
	if l.timed() && now > p.start { // ticks of two processors may disagree by a few
		latency = uint64(now - p.start)
	}
	var dropped uint64
	if drop {
		dropped = 1
	}
	l.stripes.sample(latency, dropped, peakMark(l.window.id.Load(), p.inFlight))
	if now >= l.window.end.Load() {
		l.closeWindow(now)
	}
}

// timed reports whether calls are timed: AIMD uses no latency, so its calls read the clock
// once, at the end.
func (l *Limiter) timed() bool { return l.cfg.Algorithm != AIMD }

// Name returns the limiter's instance id.
func (l *Limiter) Name() string { return l.cfg.Name }

// Limit returns how many calls may run at once now.
func (l *Limiter) Limit() int { return int(l.slots.limit.Load()) }

// InFlight returns how many calls hold a slot now.
func (l *Limiter) InFlight() int { return int(l.slots.inFlight.Load()) }
