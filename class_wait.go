package adaptivelimit

import "github.com/resilience4cata/adaptivelimit/internal/clock"

// enqueueClass queues a caller of class c, as enqueue does.
func (l *Limiter) enqueueClass(c int) *waiter {
	return l.enqueue(&l.classes.queues[c], permitCount(0, c))
}

// serveClasses takes free slots for waiters, those of the highest class first, each under its
// class's ceiling, in the limiter's order within a class. A class that finds no slot ends it:
// the ceilings of the classes below it are no higher. Slots that a take gave back to the
// shared count are this loop's to serve, as in serve. It holds mu.
func (l *Limiter) serveClasses() {
	cs := l.classes
	for c := range cs.queues {
		q := &cs.queues[c]
		for q.head != nil {
			f, counted, _ := l.takeClass(c)
			if f == 0 {
				return
			}
			w := q.head
			if l.cfg.WaitOrder == LIFO {
				w = q.tail
			}
			q.remove(w)
			l.wait.count.Add(-1)
			w.served, w.inFlight, w.counted = true, f, counted
			w.ready <- struct{}{}
		}
	}
}

// gaveUpClass counts the rejection of a waiter of a class that gave up, and frees the slot
// taken for it where it was served as it gave up.
func (l *Limiter) gaveUpClass(w *waiter, served bool) {
	l.countRejected(classOf(w.inFlight), false) // the limiter's count has it: see waitFor
	if served {
		l.freeClass(ticket{l: l, inFlight: w.inFlight, counted: w.counted})
	}
}

// startedClass is started for a classed limiter: its permit carries the class in f, and was
// counted as take says. A Clock that panics frees the slot, and the panic goes on.
func (l *Limiter) startedClass(f int64, counted bool) Permit {
	p := ticket{l: l, start: untimed, inFlight: f, counted: counted}
	if l.timed() {
		if l.src.kind == sourceTicks {
			p.start = clock.Ticks()
		} else {
			p.start = l.classNow(p)
		}
	}
	return Permit{ticket: p}
}

func (l *Limiter) classNow(p ticket) int64 {
	if l.src.kind != sourceOther {
		return l.src.now()
	}
	ok := false
	defer func() {
		if !ok {
			l.freeClass(p)
		}
	}()
	now := l.src.clock.Nanotime()
	ok = true
	return now
}
