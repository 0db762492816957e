package adaptivelimit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// WaitOrder is the order in which waiting callers get freed slots.
type WaitOrder int

const (
	// FIFO serves the caller that has waited longest first: the default.
	FIFO WaitOrder = iota
	// LIFO serves the newest caller first. Under overload the newest callers, whose own
	// callers are likely still waiting, get the slots, and the oldest time out.
	LIFO
)

func (o WaitOrder) String() string {
	switch o {
	case FIFO:
		return "fifo"
	case LIFO:
		return "lifo"
	}
	return fmt.Sprintf("WaitOrder(%d)", int(o))
}

// waitQueue holds the callers of AcquireContext that wait for a slot, in a list by class
// (one without classes). The count is what a finishing call reads: it has a line of its own
// and is written only when a caller starts or stops waiting, so with nobody waiting it stays
// in every processor's cache. The rest is touched only by waiters and by the calls that serve
// them, under mu, and is padded away from what every call reads.
type waitQueue struct {
	_     pad
	count atomic.Int64 // waiters in every list
	_     pad

	mu        sync.Mutex
	lists     []waitList    // by class, the highest first
	abandoned atomic.Uint64 // waiters that gave up
	_         pad
}

// waitList is the waiters of one class.
type waitList struct {
	head, tail *waiter
	count      atomic.Int64 // read without mu by a window's close (classSet.windowClosed)
}

// waiter is one waiting caller. A waiter is served once: the call that serves it takes a
// slot for it, takes it off the list and sends on ready, which has room for that one send,
// so serving never blocks. Each wait allocates its own waiter: a pooled one would carry its
// channel from one testing/synctest bubble into another, where using it panics.
type waiter struct {
	prev, next *waiter
	ready      chan struct{}
	ce         *ceiling // the waiter's class's: nil without classes
	served     bool     // under mu: a slot was taken for this waiter
	inFlight   int64    // the count in flight with that slot
	leased     bool     // and how take counted it
}

// AcquireContext takes a slot like Acquire, but where the limit is full and Config.MaxWait
// is set, it waits for one, until MaxWait has passed or ctx is done. A slot freed by Done or
// Cancel, or made free by a higher limit after a window, goes to a waiter rather than to a
// new caller of AcquireContext, in Config.WaitOrder. On a limiter with classes the call is of
// the class that WithClass put in ctx (the lowest where none is), and waits behind the callers
// of its class and of the higher ones.
//
// A caller that gives up gets an error that matches ErrLimitExceeded and, where ctx ended
// the wait, ctx's error too; it holds no slot. A caller that would make more than
// Config.MaxWaiters wait is rejected at once, as is every caller where MaxWait is 0, the
// default. A ctx that is done before the call returns its error without a slot. The time
// spent waiting is not part of the call's latency, which runs from taking the slot.
func (l *Limiter) AcquireContext(ctx context.Context) (Permit, error) {
	if l == nil {
		panicUnusable()
	}
	if err := ctx.Err(); err != nil {
		return Permit{}, err
	}
	ce := l.lowest
	if l.classes != nil {
		name, _ := ClassFromContext(ctx) // no class, "", is the lowest
		ce = l.classes.named(name)
	}
	if l.enforce != enforced || l.cfg.MaxWait == 0 {
		return l.acquire(ce)
	}
	if l.wait.count.Load() == 0 {
		// Nobody waits: take a free slot as acquire does. With waiters, queue behind them.
		n, leased, freed := l.take(ce)
		if freed {
			l.passOn()
		}
		if n != 0 {
			return l.started(n, leased, ce), nil
		}
	}
	if ce != nil && l.heldBackIdle(ce) && l.closeIdle() {
		return l.AcquireContext(ctx)
	}
	w := l.enqueue(ce)
	if w == nil {
		return Permit{}, l.reject(ce)
	}
	return l.waitFor(ctx, w)
}

// waitFor waits until w is served, MaxWait passes or ctx is done.
//
// A waiter of a class below the highest also looks, every half window, for slots that the
// classes above took back from its class and that lie free (heldBackIdle), and closes the
// window where it is over (closeIdle), which lends them again and serves the waiters. A
// window closes as a call finishes: with every caller waiting, and none in flight, a close of
// a waiter's is the only one, and without it the waiters of the lower classes would wait for
// their MaxWait behind free slots.
func (l *Limiter) waitFor(ctx context.Context, w *waiter) (Permit, error) {
	select {
	case <-w.ready: // served while queueing: no timer needed
		return l.served(w), nil
	default:
	}
	timer := time.NewTimer(l.cfg.MaxWait)
	defer timer.Stop()
	var look <-chan time.Time
	if w.ce != nil && w.ce.c > 0 {
		t := time.NewTicker(max(l.cfg.Window/2, minWindow))
		defer t.Stop()
		look = t.C
	}
	for {
		select {
		case <-w.ready:
			return l.served(w), nil
		case <-look:
			if l.heldBackIdle(w.ce) {
				l.closeIdle()
			}
		case <-timer.C:
			l.giveUp(w)
			return Permit{}, l.rejection
		case <-ctx.Done():
			l.giveUp(w)
			return Permit{}, &waitError{rejection: l.rejection, ctxErr: ctx.Err()}
		}
	}
}

// served returns the permit of w, a waiter that was served.
func (l *Limiter) served(w *waiter) Permit { return l.started(w.inFlight, w.leased, w.ce) }

// started returns the permit of a caller of AcquireContext of the class of ce that took a
// slot with n in flight, leased or not: its latency runs from now.
func (l *Limiter) started(n int64, leased bool, ce *ceiling) Permit {
	p := ticket{l: l, start: untimed, inFlight: n, grant: grant{class: ce.index(), leased: leased}}
	if l.timed() {
		p.start = l.startOf(p)
	}
	return Permit{ticket: p}
}

// enqueue adds a waiter of the class of ce to its list, and serves the lists, since a slot
// may have been freed while the caller was on its way here; it returns nil where the waiters
// are at their bound. A waiter that those serves left waiting was turned away (turnAway): one
// served at once was not, and takes nothing back from the classes below.
//
// A finishing call frees its slot and then reads the count; a caller here adds to the count
// and then looks for a free slot. Atomics are sequentially consistent, so at least one of
// the two sees the other, and a slot is never freed unseen by a waiter that came too late.
// A slot freed to a P's cache is seen too: the finishing call sets the cached flag after it
// fills the cache, and whoever clears the flag empties every cache after it, giving the
// slots to the shared count and then passing them on (take).
func (l *Limiter) enqueue(ce *ceiling) *waiter {
	q := &l.wait
	bound := int64(l.cfg.MaxWaiters)
	if bound == 0 {
		bound = l.slots.limit.Load()
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.count.Load() >= bound {
		return nil
	}
	list := &q.lists[ce.index()]
	w := &waiter{ready: make(chan struct{}, 1), prev: list.tail, ce: ce}
	if list.tail != nil {
		list.tail.next = w
	} else {
		list.head = w
	}
	list.tail = w
	list.count.Add(1)
	q.count.Add(1)
	l.serve()
	if ce != nil && !w.served {
		l.turnAway(ce)
	}
	return w
}

// passOn hands slots to waiters, if there are any, after a slot was freed or the limit
// raised. With nobody waiting it costs one load.
func (l *Limiter) passOn() {
	if l.wait.count.Load() != 0 {
		l.serveLocked()
	}
}

// serveLocked is serve under mu: apart from passOn, which every finishing call inlines.
func (l *Limiter) serveLocked() {
	l.wait.mu.Lock()
	l.serve()
	l.wait.mu.Unlock()
}

// serve takes free slots for waiters while both last: those of the highest class first, each
// below its class's ceiling, in the limiter's order within a class. A class that finds no slot
// ends it: the ceilings of the classes below it are no higher. Slots that a take gave back to
// the shared count are this loop's to serve. It holds mu.
func (l *Limiter) serve() {
	q := &l.wait
	for c := range q.lists {
		list := &q.lists[c]
		for list.head != nil {
			n, leased, _ := l.take(list.head.ce)
			if n == 0 {
				return
			}
			w := list.head
			if l.cfg.WaitOrder == LIFO {
				w = list.tail
			}
			q.remove(list, w)
			w.served, w.inFlight, w.leased = true, n, leased
			w.ready <- struct{}{}
		}
	}
}

// giveUp takes w off its list, and counts its rejection. Where a slot was taken for w as it
// gave up, the slot goes to the next waiter or back to the limit: a waiter that gives up holds
// none.
func (l *Limiter) giveUp(w *waiter) {
	q := &l.wait
	q.mu.Lock()
	served := w.served
	if !served {
		q.remove(&q.lists[w.ce.index()], w)
	}
	q.mu.Unlock()
	q.abandoned.Add(1)
	l.countRejection(w.ce)
	if served {
		l.free(ticket{l: l, inFlight: w.inFlight, grant: grant{class: w.ce.index(), leased: w.leased}})
	}
}

// remove takes w off list. It holds mu.
func (q *waitQueue) remove(list *waitList, w *waiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		list.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		list.tail = w.prev
	}
	w.prev, w.next = nil, nil
	list.count.Add(-1)
	q.count.Add(-1)
}

// waitError is the error of a caller whose context ended its wait: it matches both the
// limiter's rejection and the context's error.
type waitError struct {
	rejection error
	ctxErr    error
}

func (e *waitError) Error() string {
	return e.rejection.Error() + ": gave up waiting: " + e.ctxErr.Error()
}

func (e *waitError) Unwrap() []error { return []error{e.rejection, e.ctxErr} }
