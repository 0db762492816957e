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

// waitQueue holds AcquireContext's waiters in lists by class, under mu. count, read by every
// finishing call, has its own line, written only as waiters come and go: cached while none wait.
type waitQueue struct {
	_     pad
	count atomic.Int64 // waiters in every list
	_     pad

	mu        sync.Mutex
	lists     []waitList    // by class, the highest first
	abandoned atomic.Uint64 // waiters that gave up
	_         pad
}

type waitList struct {
	head, tail *waiter
	count      atomic.Int64 // read without mu by a window's close (classSet.windowClosed)
}

// waiter is a waiting caller, served once: its server takes a slot for it, unlists it and
// sends on ready, which has room for that send, so serving never blocks. Not pooled: a pooled
// waiter's channel would cross testing/synctest bubbles, where using it panics.
type waiter struct {
	prev, next *waiter
	ready      chan struct{}
	ce         *ceiling // the waiter's class's: nil without classes
	served     bool     // under mu: a slot was taken for this waiter
	inFlight   int64    // the count in flight with that slot
	leased     bool     // and how take counted it
}

// AcquireContext takes a slot like Acquire, but where the limit is full and Config.MaxWait is
// set, it waits for one until MaxWait passes or ctx is done. A slot freed by Done or Cancel, or
// by a higher limit after a window, goes to a waiter rather than to a new caller of
// AcquireContext, in Config.WaitOrder. With classes the call is of the class WithClass put in
// ctx (the lowest where none is), and waits behind the callers of its class and higher ones.
//
// A caller that gives up holds no slot and gets an error matching ErrLimitExceeded and, where
// ctx ended the wait, ctx's error. A caller that would make more than Config.MaxWaiters wait,
// or any where MaxWait is 0 (the default), is rejected at once. A ctx done before the call
// returns its error without a slot. Latency runs from taking the slot, not from the wait.
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

// waitFor waits until w is served, MaxWait passes or ctx is done. A waiter below the highest
// class also checks every half window for held-back slots lying free (heldBackIdle) and closes
// the window if over (closeIdle), lending them to the waiters: with every caller waiting no
// call finishes to close it, and lower classes would wait out MaxWait behind free slots.
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

func (l *Limiter) served(w *waiter) Permit { return l.started(w.inFlight, w.leased, w.ce) }

// enqueue adds a waiter of ce's class to its list (nil at the bound) and serves the lists, as
// a slot may have come free meanwhile; a waiter left waiting was turned away (turnAway).
// No slot comes free unseen: a finisher frees, then reads count; a waiter adds to count, then
// looks; sequentially consistent atomics make one see the other. For a cached slot too: the
// finisher sets cachedFlag after filling the cache, and whoever clears it empties every cache
// after, into taken, then passes the slots on (take).
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

// passOn hands slots to waiters, if any, after a free or a raised limit: one load with none.
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

// serve, under mu, gives free slots to waiters, highest class first, in WaitOrder within one;
// a class finding none ends it (the ceilings below are no higher). It serves what its takes free.
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

// giveUp unlists w and counts its rejection; a slot served to it meanwhile is freed again.
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
		l.free(ticket{l: l, inFlight: w.inFlight, grant: newGrant(w.ce.index(), w.leased)})
	}
}

// remove takes w off list, under mu.
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

// waitError, for a wait its context ended, matches both l.rejection and the context's error.
type waitError struct {
	rejection error
	ctxErr    error
}

func (e *waitError) Error() string {
	return e.rejection.Error() + ": gave up waiting: " + e.ctxErr.Error()
}

func (e *waitError) Unwrap() []error { return []error{e.rejection, e.ctxErr} }
