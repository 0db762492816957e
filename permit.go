package adaptivelimit

// Permit is a slot taken by Acquire. Finish it exactly once, with Done or Cancel, from any
// goroutine: the call's latency runs from Acquire to that moment. The zero Permit, which
// Acquire returns with an error, needs no finishing; Done and Cancel on it do nothing.
//
// Done and Cancel clear the permit, so a second finish of the same variable does nothing: a
// deferred Cancel after Done, or a Done repeated in a retry loop, is safe. A copy of a permit
// is not cleared with it: finishing a copy of a permit that was already finished is a bug
// that frees a slot some other call holds, so that more calls than the limit run at once,
// and a later, correct finish panics instead. Pass permits by pointer, or finish them where
// they were acquired.
type Permit struct {
	l        *Limiter
	start    int64 // clock units
	inFlight int64 // calls in flight when this one took its slot, itself included
}

// Done finishes the call with its outcome and clears p. A nil err makes the call a sample of
// the dependency's latency; an err that the limiter's DropOn accepts makes it a sample marked
// as a drop (the dependency is overloaded); any other err only frees the slot, since it says
// nothing about load.
func (p *Permit) Done(err error) {
	if q := *p; q.l != nil {
		*p = Permit{}
		q.l.done(q, err, 0)
	}
}

// Cancel frees the slot without a sample, and clears p: a cancelled call says nothing about
// the dependency.
func (p *Permit) Cancel() {
	if l := p.l; l != nil {
		f := p.inFlight
		*p = Permit{}
		if l.mode == classed {
			l.freeClass(f)
			l.countCancelled()
			return
		}
		l.cancel()
	}
}
