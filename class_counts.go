package adaptivelimit

import "sync/atomic"

// classStripe holds one P's counts by class: the calls that took and freed a slot on the P,
// those rejected on it, and those that named an unknown class. A call adds to its P's line in
// the pin that takes or frees its slot (the limiter's stripe i has cs.stripe(i)), so that a
// classed call writes no line that another P writes.
type classStripe struct {
	acquired [MaxClasses]uint64
	released [MaxClasses]uint64
	rejected [MaxClasses]uint64
	unknown  uint64
	_        [2*cacheLineSize - (3*MaxClasses+1)*8]byte
}

// countAcquired counts a call of class c that took a slot, after it took it.
func (l *Limiter) countAcquired(c int) {
	s, own := l.classes.pin()
	add(&s.acquired[c&(MaxClasses-1)], 1, own)
	procUnpin()
}

// countShared is countAcquired on the overflow line, for a limiter without leases (takeFirst).
func (cs *classSet) countShared(c int) { atomic.AddUint64(&cs.overflow.acquired[c&(MaxClasses-1)], 1) }

// countRejected counts a rejected call of class c on its P's line, the only line a classed
// limiter counts it on (Snapshot.Rejected sums the classes').
func (cs *classSet) countRejected(c int) {
	s, own := cs.pin()
	add(&s.rejected[c&(MaxClasses-1)], 1, own) // the mask spares a bounds check
	procUnpin()
}

func (cs *classSet) countUnknown() {
	s, own := cs.pin()
	add(&s.unknown, 1, own)
	procUnpin()
}

// pin pins the goroutine to its P and returns the P's class stripe and whether the P owns it,
// as stripes.pin does. Unpin with procUnpin.
func (cs *classSet) pin() (s *classStripe, own bool) {
	p := procPin()
	return cs.stripe(p), p < len(cs.counts)
}

// stripe returns the class stripe i of all: the overflow one last.
func (cs *classSet) stripe(i int) *classStripe {
	if i < len(cs.counts) {
		return &cs.counts[i]
	}
	return &cs.overflow
}

// inFlight counts each class's calls holding a slot: acquired on every P less released, read in
// a second pass, as stripes.held does (which says why no count is above the truth). One pass
// serves every class, so they add up to no more than the calls holding a slot at one moment.
func (cs *classSet) inFlight(held *[MaxClasses]int64) {
	n := len(cs.names)
	for i := range len(cs.counts) + 1 {
		s := cs.stripe(i)
		for c := range n {
			held[c] += int64(atomic.LoadUint64(&s.acquired[c]))
		}
	}
	for i := range len(cs.counts) + 1 {
		s := cs.stripe(i)
		for c := range n {
			held[c] -= int64(atomic.LoadUint64(&s.released[c]))
		}
	}
	for c := range n {
		held[c] = max(held[c], 0) // a class's calls at that moment are at least 0
	}
}

func (cs *classSet) rejections(c int) uint64 {
	var n uint64
	for i := range len(cs.counts) + 1 {
		n += atomic.LoadUint64(&cs.stripe(i).rejected[c])
	}
	return n
}

// unknowns returns the calls so far that named a class the limiter does not have.
func (cs *classSet) unknowns() uint64 {
	var n uint64
	for i := range len(cs.counts) + 1 {
		n += atomic.LoadUint64(&cs.stripe(i).unknown)
	}
	return cs.unknown.report(n)
}
