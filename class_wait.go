package adaptivelimit

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
			f, counted, _ := l.takeClass(c, cs.ceilings.hold(c))
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
