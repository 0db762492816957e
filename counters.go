package adaptivelimit

import "sync/atomic"

// outcomes counts the calls that finished without a sample. Calls on every processor add to
// it, so it has a line of its own; a call that finishes with a sample never touches it: the
// stripes count those.
type outcomes struct {
	ignored   atomic.Uint64 // Done with an error that DropOn ignores, and Finish(Ignore)
	cancelled atomic.Uint64 // Cancel
	_         [cacheLineSize - 16]byte
}

// ignore frees the slot of a call whose outcome says nothing about load, and counts it. It
// counts after the free, which panics for a permit finished twice.
func (l *Limiter) ignore(p ticket) {
	l.free(p)
	l.outcomes.ignored.Add(1)
}

// countCancelled counts a cancelled call, once its slot is freed.
func (l *Limiter) countCancelled() { l.outcomes.cancelled.Add(1) }
