package adaptivelimit

// Permit is a slot taken by Acquire. Finish it exactly once, with Done or Cancel, from any
// goroutine: the call's latency runs from Acquire to that moment. The zero Permit, which
// Acquire returns with an error, needs no finishing; Done and Cancel on it do nothing.
//
// Done and Cancel clear the permit, so a second finish of the same variable (a deferred
// Cancel after Done, a Done repeated in a retry loop) does nothing. A copy is not cleared, and
// finishing a copy of a finished permit would free another call's slot: do not copy a Permit
// that holds a slot. go vet reports copies as it does a sync.Mutex's (assignment, argument,
// return, append, range variable; not a channel send, ch <- p). Pass permits by pointer, and
// hand one on with Move, which clears the permit it moves from:
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

// grant is how a call got its slot, in one byte so that a ticket is four words in registers
// (with five fields, Permit copies went through memory, 2x a call):
//
//   - class: the call's priority class, 0 without classes (the low bits, below MaxClasses);
//   - leased: the take counted the call in its P's stripe, under leases (slots.go; grantLeased).
type grant uint8

const grantLeased grant = 0x80

// Every class index is below grantLeased: the constant overflows where MaxClasses does not.
const _ = uint8(grantLeased - MaxClasses)

func newGrant(class uint8, leased bool) grant {
	if leased {
		return grant(class) | grantLeased
	}
	return grant(class)
}

func (g grant) class() uint8 { return uint8(g &^ grantLeased) }
func (g grant) leased() bool { return g&grantLeased != 0 }

// noCopy makes go vet report copies of its holder (copylocks); first in a struct, it takes no room.
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
// the dependency's latency; an err that the limiter's DropOn accepts, a sample marked as a drop
// (the dependency is overloaded); any other err only frees the slot: it says nothing about load.
func (p *Permit) Done(err error) {
	if q := p.ticket; q.l != nil {
		p.ticket = ticket{}
		q.l.done(q, err, 0)
	}
}

// Cancel frees the slot without a sample and clears p: a cancelled call says nothing about load.
func (p *Permit) Cancel() {
	if q := p.ticket; q.l != nil {
		p.ticket = ticket{}
		q.l.cancel(q)
	}
}
