package adaptivelimit

// Limits below one call in flight (Config.SubUnitFloor; docs/algorithms.md, "Limits below one
// call in flight"): a limit x below 1 admits one call at a time, at most one every latency/x,
// latency being the baseline, else the last window's mean.
//
//   - While paced, slots.limit is 0, so that acquire's rejection sends every call to acquireAny,
//     which finds the pace (admitPaced); slots.gap is 0 while the limit is 1 or more, and a
//     rejection then reads neither the pace nor the clock.
//   - A paced admission takes the one slot (slots.taken 0 to 1), then moves slots.next on by the
//     gap with a compare-and-swap, or gives the slot back: at most one call is in flight, once
//     those admitted above 1 finish, and no slot is taken beyond the count.
//   - slots.next keeps its schedule, at most one gap behind the clock, so that calls that come
//     faster than the pace are admitted at it; a turn more than a gap ahead has come.
//   - Drops stretch the gap for a window (slowPace, unslow); it is pacedWindows windows at most.
//   - Only a limiter without Classes and MaxWait is paced (Config.validate): reserves are whole
//     slots, and a waiter would wait for a freed slot, not a turn.

// admitPaced admits a call, where paced, whose turn has come while no call holds the slot.
func (l *Limiter) admitPaced() (ticket, bool) {
	sl := &l.slots
	gap := sl.gap.Load()
	if gap == 0 {
		return ticket{}, false
	}
	now := l.src.now() // a Clock that panics does so before a slot is taken
	next := sl.next.Load()
	// Not yet the turn: now in [next-gap, next), in one compare. A turn further ahead (a slower
	// pace's, or a clock stepped back) has come, and the turns start again from now.
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

// setPace paces the calls from now, the window's close, where d's limit is below 1, else stops
// pacing and sets d.ExactLimit to LimitAfter. A dry run paces nothing: it counts the calls
// above 1 as rejected.
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

// pacedWindows is the most windows between paced admissions, whatever the latency, so that
// windows close and a dependency back is found (a fleet of 10,000 then sends 1,000 calls a
// second with 1 s windows, a fifth of what 50 slots of 10 ms calls serve); also the longest a
// paced window waits for its samples (lossDelay.nextEnd).
const pacedWindows = 10

// slowPace doubles a paced limiter's gap at a drop, up to slowestGaps times the last close's
// (slots.paceGap): a paced limiter's windows are long, and a fleet whose dependency lost half
// its capacity would time calls out for a window before one closed. The next close sets the gap
// anew; losing the race to it or to another drop leaves the gap as it was.
func (l *Limiter) slowPace() {
	sl := &l.slots
	if gap := sl.gap.Load(); gap != 0 {
		slowest := min(slowestGaps*sl.paceGap.Load(), pacedWindows*l.windowUnits)
		sl.gap.CompareAndSwap(gap, min(2*gap, max(gap, slowest)))
	}
}

// unslow takes the gap back to the last close's where a window's end passed short of samples.
func (l *Limiter) unslow() {
	sl := &l.slots
	if gap := sl.gap.Load(); gap != 0 {
		sl.gap.CompareAndSwap(gap, sl.paceGap.Load())
	}
}

// slowestGaps is how many times the close's gap drops stretch it to: a few, so that a limiter
// paced through an incident tries the dependency several times a window, and finds it back.
const slowestGaps = 4

// moved reports whether the window of d moved the limit from before, the ExactLimit of the
// window before it: also where it stayed below 1.
func moved(d *Decision, before float64) bool {
	return d.LimitAfter != d.LimitBefore || d.ExactLimit != before
}
