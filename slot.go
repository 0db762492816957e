package adaptivelimit

import "sync/atomic"

// slots counts the calls in flight against the limit. Every call writes the count, so it is
// padded away from everything else; the limit shares its line because Acquire reads both
// and one line then serves both, while the limit itself changes at most once a window.
type slots struct {
	_        pad
	inFlight atomic.Int64
	limit    atomic.Int64
	_        pad
}

// tryAcquire takes a slot if fewer than the limit are held and returns the count in flight
// with it. A full limit costs two loads and a compare, and writes nothing.
func (s *slots) tryAcquire() (inFlight int64, ok bool) {
	for {
		n := s.inFlight.Load()
		if n >= s.limit.Load() {
			return n, false
		}
		if s.inFlight.CompareAndSwap(n, n+1) {
			return n + 1, true
		}
	}
}

// full reports whether every slot is held.
func (s *slots) full() bool { return s.inFlight.Load() >= s.limit.Load() }

// take takes a slot whatever the limit, for a dry run.
func (s *slots) take() int64 { return s.inFlight.Add(1) }

// release frees a slot. Releasing one that is not held would let the limiter admit more
// calls than its limit from then on, so it reports false instead, leaving the count as it was.
func (s *slots) release() (held bool) {
	if s.inFlight.Add(-1) < 0 {
		s.inFlight.Add(1)
		return false
	}
	return true
}

// free frees a slot, and panics if it was not held.
func (s *slots) free() {
	if !s.release() {
		panicFinishedTwice()
	}
}

func panicFinishedTwice() {
	panic("adaptivelimit: permit finished twice: more slots released than were taken")
}
