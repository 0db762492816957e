package adaptivelimit

import (
	"sync/atomic"
	"time"
)

// windowState is read by every completing call and written once a window, so it has a line
// of its own, away from the in-flight count that every call writes.
type windowState struct {
	_   pad
	end atomic.Int64  // clock units: the first completion at or after it may close the window
	id  atomic.Uint64 // windows closed so far
	_   pad
}

// closeWindow ends the window if it is over and holds enough samples, and recomputes the
// limit. One goroutine at a time closes; the others return at once rather than wait.
func (l *Limiter) closeWindow(now int64) {
	if !l.closing.CompareAndSwap(false, true) {
		return
	}
	defer l.closing.Store(false)
	end := l.window.end.Load()
	if now < end {
		return // closed by another goroutine since this one looked
	}
	id := l.window.id.Load()
	read := l.stripes.sum(id)
	samples := read.samples - l.read.samples
	if samples < uint64(l.cfg.MinWindowSamples) {
		// Too few samples: extend the window by whole windows until it ends after now,
		// keeping its samples. With no traffic for a while that is several windows at once.
		l.window.end.Store(end + ((now-end)/l.windowUnits+1)*l.windowUnits)
		return
	}
	w := window{
		samples:     samples,
		drops:       read.drops - l.read.drops,
		meanLatency: float64(read.latency-l.read.latency) / float64(samples) * l.src.nanosPerUnit,
		maxInFlight: int(read.maxInFlight),
	}
	l.read = read
	d := Decision{
		Samples:     int(w.samples),
		Drops:       int(w.drops),
		Dropped:     w.drops > 0,
		MeanLatency: time.Duration(w.meanLatency),
		MaxInFlight: w.maxInFlight,
		LimitBefore: l.Limit(),
	}
	d = l.algorithm.next(w, d)
	l.slots.limit.Store(int64(d.LimitAfter))
	if d.LimitAfter > d.LimitBefore {
		l.passOn() // the new slots go to waiters first
	}
	l.window.id.Store(id + 1)
	l.window.end.Store(now + l.windowUnits)
	l.published.store(&d, l.algorithm.longLatency())
	if d.LimitAfter != d.LimitBefore && l.cfg.OnLimitChange != nil {
		l.cfg.OnLimitChange(l.cfg.Name, d)
	}
}
