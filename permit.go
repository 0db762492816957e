package adaptivelimit

// Permit is a slot taken by Acquire. Finish it exactly once, with Done or Cancel, from any
// goroutine: the call's latency runs from Acquire to that moment. The zero Permit, which
// Acquire returns with an error, needs no finishing; Done and Cancel on it do nothing.
type Permit struct {
	l        *Limiter
	start    int64 // clock units
	inFlight int64 // calls in flight when this one took its slot, itself included
}

// Done finishes the call with its outcome. A nil err makes the call a sample of the
// dependency's latency; an err that the limiter's DropOn accepts makes it a sample marked as
// a drop (the dependency is overloaded); any other err only frees the slot, since it says
// nothing about load.
func (p Permit) Done(err error) {
	if p.l != nil {
		p.l.done(p, err)
	}
}

// Cancel frees the slot without a sample: a cancelled call says nothing about the
// dependency.
func (p Permit) Cancel() {
	if p.l != nil {
		p.l.cancel()
	}
}
