package adaptivelimit

// Permit is a slot taken by Acquire. Finish it exactly once, with Done or Cancel, from any
// goroutine: the call's latency runs from Acquire to that moment. The zero Permit, which
// Acquire returns with an error, needs no finishing; Done and Cancel on it do nothing.
//
// Done and Cancel clear the permit, so a second finish of the same variable does nothing: a
// deferred Cancel after Done, or a Done repeated in a retry loop, is safe. A copy of a permit
// is not cleared with it: finishing a copy of a permit that was already finished would free
// a slot that some other call holds. So a Permit must not be copied once it holds a slot, and
// go vet reports a copy in an assignment, an argument, a return, append and a range variable,
// as it does a copy of a sync.Mutex, though not in a channel send (ch <- p): pass permits by
// pointer, and hand one on with Move, which clears the permit it moves from:
//
//	held = append(held, p.Move())
//	return ctx, p.Move(), err
type Permit struct {
	noCopy noCopy
	ticket
}

// ticket is what a Permit holds. The limiter passes it by value, as it may not a Permit.
type ticket struct {
	l        *Limiter
	start    int64 // clock units
	inFlight int64 // calls in flight when this one took its slot, itself included
	grant    grant
}

// grant is how a call got its slot. It is a field of its own so that a ticket has the four
// fields that the compiler keeps in registers: with five, every copy of a Permit went
// through memory, and a call was twice as slow.
type grant struct {
	class  uint8 // the call's priority class: 0 without classes
	leased bool  // the take counted the call in its P's stripe, under leases (slots.go)
}

// noCopy makes go vet's copylocks check report a copy of the struct that holds it, as it does
// a copy of a sync.Mutex. It takes no room at the start of a struct.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// Move returns the permit and clears p, handing the finish on to the permit returned: p then
// holds nothing, and a deferred p.Cancel does nothing.
func (p *Permit) Move() Permit {
	q := p.ticket
	p.ticket = ticket{}
	return Permit{ticket: q}
}

// Done finishes the call with its outcome and clears p. A nil err makes the call a sample of
// the dependency's latency; an err that the limiter's DropOn accepts makes it a sample marked
// as a drop (the dependency is overloaded); any other err only frees the slot, since it says
// nothing about load.
func (p *Permit) Done(err error) {
	if q := p.ticket; q.l != nil {
		p.ticket = ticket{}
		q.l.done(q, err, 0)
	}
}

// Cancel frees the slot without a sample, and clears p: a cancelled call says nothing about
// the dependency.
func (p *Permit) Cancel() {
	if q := p.ticket; q.l != nil {
		p.ticket = ticket{}
		q.l.cancel(q)
	}
}
