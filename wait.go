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

// waitQueue holds the callers of AcquireContext that wait for a slot. The count is what a
// finishing call reads: it has a line of its own and is written only when a caller starts or
// stops waiting, so with nobody waiting it stays in every processor's cache. The rest is
// touched only by waiters and by the calls that serve them, under mu, and is padded away
// from what every call reads.
type waitQueue struct {
	_     pad
	count atomic.Int64 // waiters in the list
	_     pad

	mu         sync.Mutex
	head, tail *waiter
	abandoned  atomic.Uint64 // waiters that gave up
	_          pad
}

// waiter is one waiting caller. A waiter is served once: the call that serves it takes a
// slot for it, takes it off the list and sends on ready, which has room for that one send,
// so serving never blocks. Each wait allocates its own waiter: a pooled one would carry its
// channel from one testing/synctest bubble into another, where using it panics.
type waiter struct {
	prev, next *waiter
	ready      chan struct{}
	served     bool  // under mu: a slot was taken for this waiter
	inFlight   int64 // the count in flight with that slot
	counted    bool  // and how take counted it
}

// AcquireContext takes a slot like Acquire, but where the limit is full and Config.MaxWait
// is set, it waits for one, until MaxWait has passed or ctx is done. A slot freed by Done or
// Cancel, or made free by a higher limit after a window, goes to a waiter rather than to a
// new caller of AcquireContext, in Config.WaitOrder.
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
	if l.mode == classed {
		return l.acquireClassContext(ctx)
	}
	if !l.enforced() || l.cfg.MaxWait == 0 {
		return l.Acquire()
	}
	if l.wait.count.Load() == 0 {
		// Nobody waits: take a free slot as Acquire does. With waiters, queue behind them.
		n, counted, freed := l.take(0)
		if freed {
			l.passOn()
		}
		if n != 0 {
			return l.started(n, counted), nil
		}
	}
	return l.await(ctx)
}

// started returns the permit of a caller of AcquireContext that took a slot with n in
// flight, itself included (and its class, for a classed limiter: permitCount), counted as
// take says: its latency runs from now.
func (l *Limiter) started(n int64, counted bool) Permit {
	p := ticket{l: l, start: untimed, inFlight: n, counted: counted}
	if l.timed() {
		p.start = l.nowHolding(p)
	}
	return Permit{ticket: p}
}

// await queues the caller and waits until it is served, MaxWait passes or ctx is done.
func (l *Limiter) await(ctx context.Context) (Permit, error) {
	w := l.enqueue(&l.wait, 0)
	if w == nil {
		return l.reject()
	}
	return l.waitFor(ctx, w)
}

// waitFor waits until w is served, MaxWait passes or ctx is done.
func (l *Limiter) waitFor(ctx context.Context, w *waiter) (Permit, error) {
	select {
	case <-w.ready: // served while queueing: no timer needed
		return l.started(w.inFlight, w.counted), nil
	default:
	}
	timer := time.NewTimer(l.cfg.MaxWait)
	defer timer.Stop()
	select {
	case <-w.ready:
		return l.started(w.inFlight, w.counted), nil
	case <-timer.C:
		l.giveUp(w)
		return l.reject()
	case <-ctx.Done():
		l.giveUp(w)
		_, rejection := l.reject()
		return Permit{}, &waitError{rejection: rejection, ctxErr: ctx.Err()}
	}
}

// enqueue adds a waiter to list, the limiter's or a class's, and serves the lists, since a
// slot may have been freed while the caller was on its way here; it returns nil where the
// waiters are at their bound. A class's waiter carries its class in inFlight until served.
//
// A finishing call frees its slot and then reads the count; a caller here adds to the count
// and then looks for a free slot. Atomics are sequentially consistent, so at least one of
// the two sees the other, and a slot is never freed unseen by a waiter that came too late.
// A slot freed to a P's cache is seen too: the finishing call sets the cached flag after it
// fills the cache, and whoever clears the flag empties every cache after it, giving the
// slots to the shared count and then passing them on (take).
func (l *Limiter) enqueue(list *waitQueue, inFlight int64) *waiter {
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
	w := &waiter{ready: make(chan struct{}, 1), prev: list.tail, inFlight: inFlight}
	if list.tail != nil {
		list.tail.next = w
	} else {
		list.head = w
	}
	list.tail = w
	list.count.Add(1)
	if list != q {
		q.count.Add(1)
	}
	l.serve()
	return w
}

// passOn hands slots to waiters, if there are any, after a slot was freed or the limit
// raised. With nobody waiting it costs one load.
func (l *Limiter) passOn() {
	if l.wait.count.Load() != 0 {
		l.serveLocked()
	}
}

func (l *Limiter) serveLocked() {
	l.wait.mu.Lock()
	l.serve()
	l.wait.mu.Unlock()
}

// serve takes free slots for waiters, in the limiter's order, while both last. It holds mu.
func (l *Limiter) serve() {
	if l.mode == classed {
		l.serveClasses()
		return
	}
	q := &l.wait
	for q.head != nil {
		n, counted, _ := l.take(0) // slots it gave back to the shared count are this loop's to serve
		if n == 0 {
			return
		}
		w := q.head
		if l.cfg.WaitOrder == LIFO {
			w = q.tail
		}
		q.remove(w)
		w.served, w.inFlight, w.counted = true, n, counted
		w.ready <- struct{}{}
	}
}

// giveUp takes w off the list. Where a slot was taken for w as it gave up, the slot goes to
// the next waiter or back to the limit: a waiter that gives up holds none.
func (l *Limiter) giveUp(w *waiter) {
	q := &l.wait
	q.mu.Lock()
	served := w.served
	if !served {
		l.unqueue(w)
	}
	q.mu.Unlock()
	q.abandoned.Add(1)
	if l.mode == classed {
		l.classes.countRejected(classOf(w.inFlight)) // the limiter's count for a classed limiter: see waitFor
	}
	if served {
		l.free(ticket{l: l, inFlight: w.inFlight, counted: w.counted})
	}
}

// unqueue takes w off its list, the limiter's or its class's. It holds mu.
func (l *Limiter) unqueue(w *waiter) {
	if l.mode != classed {
		l.wait.remove(w)
		return
	}
	l.classes.queues[classOf(w.inFlight)].remove(w)
	l.wait.count.Add(-1)
}

// remove takes w off the list. It holds mu.
func (q *waitQueue) remove(w *waiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		q.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		q.tail = w.prev
	}
	w.prev, w.next = nil, nil
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
