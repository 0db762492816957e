package adaptivelimit

import (
	"math"
	"sync/atomic"
)

// A departure is a call whose caller went away before it ended (Finish(Departed)), which any
// client can cause at will: a drop only while the dependency queues and it ran longer than
// unloaded, else ignored (docs/behaviour.md, "Departures"):
//
//   - unloaded is the lowest mean latency of the calls served in a window, rising by
//     1/departRise of the gap at each window above it;
//   - a window's latency counts a departure as long as it ran, which leaving only shortens;
//   - the dependency queues from a window at departQueued times unloaded until one under
//     departCalm times it, so that a limiter that took a queued latency for unloaded backs off
//     to near it, not to its queue at the clients' timeout.
const (
	departQueued = 1.25
	departCalm   = 1.1
	departRise   = 256
)

// departures is what the closes learned for judging departures; the closing goroutine owns it.
type departures struct {
	unloaded  float64 // nanoseconds; 0 until a timed window closed
	queued    bool
	timedFrom uint64 // the first window whose calls were all timed (Limiter.timing)
	n, units  uint64 // what the last close read of Limiter.departed
}

// departed counts the departures that were no drop and how long they ran, in clock units;
// every processor adds to it, so it has a line of its own.
type departed struct {
	_        pad
	n, units atomic.Uint64
	_        pad
}

// after updates unloaded from a window and returns how long a departure of the next must run
// to be a drop, in nanoseconds, +Inf for none: served is the window's mean latency of the calls
// served, latency the mean with its departures'.
func (d *departures) after(served, latency float64) float64 {
	if served <= 0 {
		return math.Inf(1) // an untimed window, or one that took no time: nothing to judge by
	}
	if d.unloaded > 0 {
		d.queued = latency >= departQueued*d.unloaded || d.queued && latency >= departCalm*d.unloaded
	}
	if d.unloaded == 0 || served < d.unloaded {
		d.unloaded = served
	} else {
		d.unloaded += (served - d.unloaded) / departRise
	}
	if !d.queued {
		return math.Inf(1)
	}
	return d.unloaded
}

// depart finishes p, a call whose caller went away: a drop where it ran longer than
// departAfter, else ignored. One not timed is ignored, and times the calls after it: AIMD's, on
// a limiter that no server's integration has timed (integration.NewClassAcquirer).
func (l *Limiter) depart(p ticket) {
	if p.start == untimed {
		if !l.timing.Load() {
			l.timing.Store(true)
		}
		l.ignore(p)
		return
	}
	ran := elapsed(p.start, l.nowHolding(p))
	if after := l.departAfter.Load(); after > 0 && ran > uint64(after) {
		l.drop(p)
		return
	}
	l.departed.n.Add(1)
	l.departed.units.Add(ran)
	l.ignore(p)
}

// judgeDepartures sets departAfter from w, the window that closes as window id.
func (l *Limiter) judgeDepartures(w window, id uint64) {
	if l.departures.timedFrom == 0 && l.timing.Load() && l.cfg.Algorithm == AIMD {
		l.departures.timedFrom = id + 1 // the first window that starts with every call timed
	}
	d := &l.departures
	n, units := l.departed.n.Load(), l.departed.units.Load()
	n, units, d.n, d.units = since(n, d.n), since(units, d.units), n, units
	served := w.meanLatency
	latency := (served*float64(w.samples) + float64(units)*l.src.nanosPerUnit) / max(float64(w.samples+n), 1)
	if id < l.departures.timedFrom {
		served = 0
	}
	after := d.after(served, latency)
	if math.IsInf(after, 1) {
		l.departAfter.Store(0)
		return
	}
	l.departAfter.Store(max(l.src.units(duration(after)), 1))
}
