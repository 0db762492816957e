package adaptivelimit

import "sync/atomic"

// slots is the shared count of slots taken from the limit: those that calls hold, and those
// that Ps keep idle in their caches (lease.go). Under leases it moves only when no P's cache
// serves, so it is padded away from everything else; the limit and the lease word share its
// line because every call reads all three.
type slots struct {
	_        pad
	taken    atomic.Int64
	limit    atomic.Int64
	cacheCap atomic.Int64 // the most idle slots a P's cache keeps under this limit (lease.go)
	lease    atomic.Int64 // leaseOn, cachedFlag, and sweeping times the Ps emptying the caches now
	gap      atomic.Int64 // clock units between admissions while the limit is below 1; 0 while not (pace.go)
	next     atomic.Int64 // clock units: the earliest next admission while the limit is below 1 (pace.go)
	_        pad
}

// The lease word (lease.go).
const (
	leaseOn    = 1 // Ps contended for the count in this window: finished calls may keep their slots
	cachedFlag = 2 // a P's cache may hold idle slots
	sweeping   = 4 // a P gives every cache's idle slots back to the count (reclaim)
)

// allHeld reports whether calls hold every slot of the limit less hold: every such slot is
// taken, no P's cache may hold an idle one, and none is on its way back to the shared count,
// so that a call is rejected with three loads and two compares. The lease word is read first:
// a P that empties the caches gives their slots back to the count before it says it is done.
// hold is 0 but for a class's call: what its ceiling holds back (class_ceiling.go).
func (s *slots) allHeld(hold int64) bool {
	w := s.lease.Load()
	return s.taken.Load() >= s.limit.Load()-hold && w <= leaseOn
}

// markCached records that a P may hold idle slots. It is called after the slots are put in
// the cache: a P that clears the flag and then empties the caches sees them, or the flag is
// set again after it was cleared.
func (s *slots) markCached() {
	if s.lease.Load()&cachedFlag == 0 {
		s.lease.Or(cachedFlag)
	}
}

// tryAcquire takes a slot if fewer than the limit less hold are taken and returns the slots
// taken with it, for a limiter without leases: then the slots taken are the calls in flight.
func (s *slots) tryAcquire(hold int64) (inFlight int64, ok bool) {
	for {
		n := s.taken.Load()
		if n >= s.limit.Load()-hold {
			return n, false
		}
		if s.taken.CompareAndSwap(n, n+1) {
			return n + 1, true
		}
	}
}

// takeOne is tryAcquire returning the slots taken with the slot, or 0 where it took none.
func (s *slots) takeOne(hold int64) int64 {
	if n, ok := s.tryAcquire(hold); ok {
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
