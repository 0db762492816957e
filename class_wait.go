package adaptivelimit

import "github.com/resilience4cata/adaptivelimit/internal/clock"

// enqueueClass queues a caller of class c, as enqueue does.
func (l *Limiter) enqueueClass(c int) *waiter {
	return l.enqueue(&l.classes.queues[c], int64(c)<<classShift)
}

// serveClasses takes free slots for waiters, those of the highest class first, each from a
// pool its class may use, in the limiter's order within a class. A class that finds no slot
// ends it: the classes below it may use no pool that it may not. It holds mu.
func (l *Limiter) serveClasses() {
	cs := l.classes
	for c := range cs.queues {
		q := &cs.queues[c]
		for q.head != nil {
			pool := cs.take(c)
			if pool < 0 {
				return
			}
			w := q.head
			if l.cfg.WaitOrder == LIFO {
				w = q.tail
			}
			q.remove(w)
			l.wait.count.Add(-1)
			w.served, w.inFlight = true, cs.admit(c, pool, l.slots.limit.Load())
			w.ready <- struct{}{}
		}
	}
}

// gaveUpClass counts the rejection of a waiter of a class that gave up, and frees the slot
// taken for it where it was served as it gave up.
func (l *Limiter) gaveUpClass(w *waiter, served bool) {
	l.classes.rejected(int(w.inFlight >> classShift))
	if served {
		l.freeClass(w.inFlight)
	}
}

// startedClass is started for a classed limiter: its permit carries the class and pool in
// f. A Clock that panics frees the slot, and the panic goes on.
func (l *Limiter) startedClass(f int64) Permit {
	p := ticket{l: l, start: untimed, inFlight: f}
	if l.timed() {
		if l.src.kind == sourceTicks {
			p.start = clock.Ticks()
		} else {
			p.start = l.classNow(f)
		}
	}
	return Permit{ticket: p}
}

func (l *Limiter) classNow(f int64) int64 {
	if l.src.kind != sourceOther {
		return l.src.now()
	}
	ok := false
	defer func() {
		if !ok {
			l.freeClass(f)
		}
	}()
	now := l.src.clock.Nanotime()
	ok = true
	return now
}
