package adaptivelimit

import (
	"math"
	"sync/atomic"
)

// A departure is a call whose caller went away before it ended: a client that disconnected,
// cancelled, or whose own deadline passed (Finish(Departed)). At a server's edge that is
// the only sign an HTTP client gives of a server too slow for it, and also what any client
// can send at will, at any rate. So a departure is a drop only while the dependency queues,
// and then only if it ran longer than the dependency takes without a queue; every other
// departure is ignored:
//
//   - unloaded, the latency without a queue, is the lowest mean latency of the calls served
//     in a window so far, rising by 1/departRise of the gap at each window above it, so that
//     it follows a dependency that became slower for good.
//   - A window's latency is the mean of its calls' latencies, a departure's counting as how
//     long it ran before its caller left. That is never more than the calls would have taken:
//     a caller can shorten a call by leaving, never lengthen it.
//   - The dependency queues from a window whose latency is departQueued times unloaded or more
//     until one whose latency is under departCalm times it. While it queues, a departure that
//     ran longer than unloaded is a drop.
//
// What a client does changes neither for the worse: unloaded is read from the calls served,
// and leaving early only lowers a window's latency. Below its capacity the dependency does not
// queue, so departures cannot drive the limit below what it serves, nor can hedged copies
// cancelled on a healthy dependency. While it queues, those that leave late are the overload
// signal that AIMD, Vegas and LossDelay back off on, and they go on backing off until the
// latency is near unloaded again, not only below departQueued times it: a limiter that began
// above the capacity took a queued latency for unloaded, and would otherwise settle with its
// queue at the clients' timeout.
const (
	departQueued = 1.25
	departCalm   = 1.1
	departRise   = 256
)

// departures holds what a window's close has learned of the dependency's latency for
// judging departures. It is owned by the goroutine that closes windows.
type departures struct {
	unloaded  float64 // nanoseconds; 0 until a timed window closed
	queued    bool
	timedFrom uint64 // the first window whose calls were all timed (Limiter.timing)
	n, units  uint64 // what the last close read of Limiter.departed
}

// departed counts the departures that were no drop and how long they ran, in clock units;
// those that were are samples. Departures on every processor add to it, so it has a line of
// its own.
type departed struct {
	_        pad
	n, units atomic.Uint64
	_        pad
}

// after returns how long a departure of the window after one must have run to be a drop, in
// nanoseconds, +Inf while none is: served is the mean latency of the calls it served, and
// latency the mean with its departures', each as long as it ran. It updates unloaded.
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
