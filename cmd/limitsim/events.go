package main

// eventKind orders events that fall on the same nanosecond: a call that
// completes exactly at its deadline is in time, and a completion frees its
// server before an arrival at the same instant looks for one.
type eventKind uint8

const (
	evCompletion eventKind = iota // a server finished a call
	evArrival                     // a client sends a call
)

type event struct {
	at   int64 // simulated nanoseconds
	kind eventKind
	id   int32 // call for a completion, source for an arrival
}

func (e event) before(o event) bool {
	return e.at < o.at || (e.at == o.at && e.kind < o.kind)
}

// eventQueue is a binary min-heap of events by time. It is written out rather
// than built on container/heap to keep events out of interfaces: the default
// scenario pushes and pops millions of them.
type eventQueue struct {
	heap []event
}

func (q *eventQueue) len() int { return len(q.heap) }

func (q *eventQueue) peek() event { return q.heap[0] }

func (q *eventQueue) push(e event) {
	q.heap = append(q.heap, e)
	h := q.heap
	i := len(h) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !h[i].before(h[parent]) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func (q *eventQueue) pop() event {
	h := q.heap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	q.heap = h[:last]
	h = q.heap
	i := 0
	for {
		smallest := i
		left, right := 2*i+1, 2*i+2
		if left < len(h) && h[left].before(h[smallest]) {
			smallest = left
		}
		if right < len(h) && h[right].before(h[smallest]) {
			smallest = right
		}
		if smallest == i {
			return top
		}
		h[i], h[smallest] = h[smallest], h[i]
		i = smallest
	}
}

// fifo is a growable ring buffer of int32. Deadlines and the dependency's
// wait queue both only ever grow at the back and shrink at the front.
type fifo struct {
	buf        []int32
	head, size int
}

func (f *fifo) len() int { return f.size }

func (f *fifo) front() int32 { return f.buf[f.head] }

func (f *fifo) pushBack(v int32) {
	if f.size == len(f.buf) {
		f.grow()
	}
	f.buf[(f.head+f.size)%len(f.buf)] = v
	f.size++
}

func (f *fifo) popFront() int32 {
	v := f.buf[f.head]
	f.head = (f.head + 1) % len(f.buf)
	f.size--
	return v
}

func (f *fifo) grow() {
	n := max(64, 2*len(f.buf))
	buf := make([]int32, n)
	for i := range f.size {
		buf[i] = f.buf[(f.head+i)%len(f.buf)]
	}
	f.buf, f.head = buf, 0
}
