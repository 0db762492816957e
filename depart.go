package adaptivelimit

import "math"

// A departure is a call whose caller went away before it ended: a client that disconnected,
// cancelled, or whose own deadline passed (Finish(Departed)). At a server's edge that is
// the only sign an HTTP client gives of a server too slow for it, and also what any client
// can send at will, at any rate. So a departure is a drop only where the limiter's own
// samples show the dependency queueing, and then only if the call had run well past the
// latency the dependency has without a queue; every other departure is ignored:
//
//   - unloaded is the lowest mean latency of the windows so far, rising by 1/departRise of the
//     gap at each window above it without a drop, so that it follows a dependency that became
//     slower for good, but not a queue that builds for a few hundred windows.
//   - A window whose mean latency is at least departTolerance times unloaded queued. Only in
//     the window after one that queued is a departure a drop, and only if it ran longer than
//     departTolerance times unloaded: longer than the dependency takes without a queue.
//
// A client that leaves changes neither: the latency of the calls the dependency served says
// whether it queues, and below its capacity it does not. So departures cannot drive the limit
// below what the dependency serves without a queue, nor can hedged copies cancelled on a
// healthy dependency; while the dependency does queue, those that leave late are the overload
// signal that AIMD, Vegas and LossDelay back off on.
const (
	departTolerance = 1.5
	departRise      = 256
)

// departures holds what a window's close has learned of the dependency's latency for
// judging departures. It is owned by the goroutine that closes windows.
type departures struct {
	unloaded  float64 // nanoseconds; 0 until a timed window closed
	timedFrom uint64  // the first window whose calls were all timed (Limiter.timing)
}

// after returns how long a departure of the window after one of meanLatency, with drops or
// not, must have run to be a drop, in nanoseconds, and updates unloaded: +Inf while no
// departure is a drop.
func (d *departures) after(meanLatency float64, drops bool) float64 {
	if meanLatency <= 0 {
		return math.Inf(1) // an untimed window, or one that took no time: nothing to judge by
	}
	queued := d.unloaded > 0 && meanLatency >= departTolerance*d.unloaded
	switch {
	case d.unloaded == 0, meanLatency < d.unloaded:
		d.unloaded = meanLatency
	case !drops:
		d.unloaded += (meanLatency - d.unloaded) / departRise
	}
	if !queued {
		return math.Inf(1)
	}
	return departTolerance * d.unloaded
}

// depart finishes p, a call whose caller went away: a drop where the last window queued and
// the call ran longer than departAfter, else ignored. A departure is judged by how long it
// ran, so one that was not timed is ignored and makes the calls after it timed: AIMD's, on a
// limiter that no server's integration has timed (integration.NewClassAcquirer).
func (l *Limiter) depart(p ticket) {
	if p.start == untimed {
		if !l.timing.Load() {
			l.timing.Store(true)
		}
		l.ignore(p)
		return
	}
	if after := l.departAfter.Load(); after > 0 && l.nowHolding(p)-p.start > after {
		l.noteDrop(p.start)
		l.done(p, nil, 1)
		return
	}
	l.ignore(p)
}

// judgeDepartures sets departAfter from w, the window that closes as window id.
func (l *Limiter) judgeDepartures(w window, id uint64) {
	if l.departures.timedFrom == 0 && l.timing.Load() && l.cfg.Algorithm == AIMD {
		l.departures.timedFrom = id + 1 // the first window that starts with every call timed
	}
	mean := w.meanLatency
	if id < l.departures.timedFrom {
		mean = 0
	}
	after := l.departures.after(mean, w.drops > 0)
	if math.IsInf(after, 1) {
		l.departAfter.Store(0)
		return
	}
	l.departAfter.Store(max(l.src.units(duration(after)), 1))
}
