package adaptivelimit

import "sync/atomic"

// slots is the shared count of slots taken from the limit: those that calls hold, and those
// that Ps hold idle in their caches (lease.go). It moves only when a P's cache runs out or
// overflows, so it is padded away from everything else; the limit and the idle word share
// its line because Acquire reads all three, and both change seldom.
type slots struct {
	_     pad
	taken atomic.Int64
	limit atomic.Int64
	batch atomic.Int64 // how many slots a P takes at once under this limit (lease.go)
	idle  atomic.Int64 // cachedFlag, and moving times the Ps moving slots to or from caches now
	_     pad
}

const (
	cachedFlag = 1 // a P may hold idle slots in its cache
	moving     = 2 // a P moves slots between the shared count and the caches (startMoving)
)

// full reports whether every slot is taken, for a limiter without leases.
func (s *slots) full() bool { return s.taken.Load() >= s.limit.Load() }

// allHeld reports whether every slot is taken, no P may hold an idle one, and none is on its
// way back to the shared count, so that a call is rejected without looking at the caches,
// with the slots taken and the limit it read. The idle word is read first: a P that empties
// the caches gives their slots back to the count before it says it is done.
func (s *slots) allHeld() (taken, limit int64, held bool) {
	w := s.idle.Load()
	taken, limit = s.taken.Load(), s.limit.Load()
	return taken, limit, w == 0 && taken >= limit
}

// markCached records that a P may hold idle slots. It is called after the slots are put in
// the cache: a caller that clears the flag and then looks at the caches sees them, or the
// flag is set again after it was cleared.
func (s *slots) markCached() {
	if s.idle.Load()&cachedFlag == 0 {
		s.idle.Or(cachedFlag)
	}
}

// tryAcquire takes a slot if fewer than the limit are taken and returns the slots taken with
// it, for a limiter without leases: then the slots taken are the calls in flight.
func (s *slots) tryAcquire() (inFlight int64, ok bool) {
	for {
		n := s.taken.Load()
		if n >= s.limit.Load() {
			return n, false
		}
		if s.taken.CompareAndSwap(n, n+1) {
			return n + 1, true
		}
	}
}

// tryTake is tryAcquire where only the count matters: the slots taken with the new one, or
// 0 where every slot is taken.
func (s *slots) tryTake() int64 {
	if n, ok := s.tryAcquire(); ok {
		return n
	}
	return 0
}

// take takes a slot whatever the limit, for a dry run.
func (s *slots) take() int64 { return s.taken.Add(1) }

// release gives a slot back to the shared count. Releasing one that is not held would let
// the limiter admit more calls than its limit from then on, so it reports false instead,
// leaving the count as it was.
func (s *slots) release() (held bool) {
	if s.taken.Add(-1) < 0 {
		s.taken.Add(1)
		return false
	}
	return true
}

func panicFinishedTwice() {
	panic("adaptivelimit: permit finished twice: more slots released than were taken")
}
