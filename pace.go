package adaptivelimit

// Limits below one call in flight (Config.SubUnitFloor). A limit x below 1 is a share of the
// time: one call in flight a share x of it. The limiter admits one call at a time, at most one
// every latency/x, the pace at which x calls are in flight on average (Little's law); latency
// is the algorithm's baseline, or, before it has one, the last window's mean latency. So a
// fleet of N clients holds about N*x calls in flight, fewer than N.
//
//   - While paced, slots.limit is 0, so that every call finds the limit full, and acquire's
//     rejection, which tests that the limit is not 0, sends it to acquireAny, which finds the
//     pace (admitPaced); slots.gap is 0 while the limit is 1 or more, and a rejection then
//     reads neither the pace nor the clock.
//   - A paced admission reads the clock, takes the one slot (slots.taken from 0 to 1) and
//     moves slots.next on by the gap with a compare-and-swap; one that loses the race gives
//     the slot back. So at most one call is in flight while paced, once the calls admitted
//     before the limit fell below 1 have finished, and no slot is taken beyond the count.
//   - The gap is at most pacedWindows windows.
//   - Each drop doubles the gap, up to slowestGaps times the gap that the last window's
//     close set, until the next close, or the window's end where it waits for samples
//     (slowPace, unslow).
//   - A call that misses its turn leaves it to the next: slots.next keeps its schedule, at
//     most one gap behind the clock, so that the calls admitted match the pace wherever calls
//     come faster than it. A turn more than a gap ahead, set at a slower pace or before the
//     clock stepped back, has come.
//   - Limit reports 1 while paced, the most calls in flight; Decision.ExactLimit and
//     Snapshot.ExactLimit, the share.
//   - Only a limiter without Classes and without MaxWait is paced (Config.validate): the
//     classes' reserves are whole slots, and a waiter would wait for a freed slot, not a turn.

// admitPaced admits a call where the limit is below 1, its turn has come and no call holds a
// slot, and returns its ticket; false where it did not.
func (l *Limiter) admitPaced() (ticket, bool) {
	sl := &l.slots
	gap := sl.gap.Load()
	if gap == 0 {
		return ticket{}, false
	}
	now := l.src.now() // a Clock that panics does so before a slot is taken
	next := sl.next.Load()
	// Not before the turn: now in [next-gap, next), in one compare. A turn further away was
	// set at a slower pace than today's, or the clock stepped back: it has come, and the
	// turns start again from now, as a window that a step back left far ahead ends.
	if uint64(next-1-now) < uint64(gap) || !sl.taken.CompareAndSwap(0, 1) {
		return ticket{}, false
	}
	if !sl.next.CompareAndSwap(next, later(min(max(next, now-gap), now), gap)) {
		sl.release() // another call took the turn, and has finished since
		return ticket{}, false
	}
	p := ticket{l: l, start: untimed, inFlight: 1}
	if l.timed() {
		p.start = now
	}
	return p, true
}

// setPace paces the calls where d, the window's decision, has a limit below 1, and stops
// pacing where it has not; it sets d.ExactLimit to LimitAfter where the limit is 1 or more.
// A dry run computes a limit below 1 and paces nothing: it counts the calls above 1 as
// rejected. now is the window's close, where pacing starts.
func (l *Limiter) setPace(d *Decision, now int64) {
	exact := d.ExactLimit
	if exact >= 1 || exact == 0 || l.enforce != enforced {
		if exact >= 1 || exact == 0 {
			d.ExactLimit = float64(d.LimitAfter)
		}
		if l.slots.gap.Load() != 0 {
			l.slots.gap.Store(0) // after setLimit: the limit is in force before pacing ends
		}
		return
	}
	latency := d.LongLatency
	if latency == 0 {
		latency = d.MeanLatency
	}
	gap := min(max(l.src.units(duration(float64(max(latency, 1))/exact)), 1), pacedWindows*l.windowUnits)
	if l.slots.gap.Load() == 0 {
		l.slots.next.Store(now)
	}
	l.slots.paceGap.Store(gap)
	l.slots.gap.Store(gap)
	l.slots.limit.Store(0) // after the gap: a call that finds the limit full finds the pace
}

// pacedWindows is the most windows between two paced admissions: whatever the latency (a call
// that hung for an hour), a paced limiter admits a call that often, so that its windows close
// and it finds a dependency back. A fleet of 10,000 at it sends 1,000 calls a second with 1 s
// windows, a fifth of what 50 slots of 10 ms calls serve. It is also the longest a paced
// window waits for its samples (lossDelay.nextEnd).
const pacedWindows = 10

// slowPace doubles the gap of a paced limiter, at a drop, up to slowestGaps times the gap the
// last window's close set (slots.paceGap), and no further than pacedWindows windows. A window's
// close sets the pace from the window's calls, and a paced limiter's few calls make its
// windows long: a fleet of paced limiters whose dependency lost half its capacity would
// time calls out for a window or more before one closes. Doubled at each drop, the pace of
// each limiter that sees a drop falls within a few of its calls; the next window's close
// sets it anew, from a limit that the window's drops cut. One that loses the race to a
// close or to another drop leaves the gap as it found it.
func (l *Limiter) slowPace() {
	sl := &l.slots
	if gap := sl.gap.Load(); gap != 0 {
		slowest := min(slowestGaps*sl.paceGap.Load(), pacedWindows*l.windowUnits)
		sl.gap.CompareAndSwap(gap, min(2*gap, max(gap, slowest)))
	}
}

// unslow takes a paced limiter's gap back to the one its last window's close set, where the
// window's end passed without the samples to close it: drops slow the pace for a window.
func (l *Limiter) unslow() {
	sl := &l.slots
	if gap := sl.gap.Load(); gap != 0 {
		sl.gap.CompareAndSwap(gap, sl.paceGap.Load())
	}
}

// slowestGaps is how many times the gap its window's close set that drops may stretch a
// gap to. A few: a limiter paced in an incident, whose calls all time out, keeps trying the
// dependency several times a window, and finds it back as soon as without the stretch.
const slowestGaps = 4

// moved reports whether the window of d moved the limit from before, the ExactLimit of the
// window before it: also where it stayed below 1.
func moved(d *Decision, before float64) bool {
	return d.LimitAfter != d.LimitBefore || d.ExactLimit != before
}
