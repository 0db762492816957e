// Package floor is the fixed bulkhead that the benchmarks measure the limiter against: the
// least a concurrency limit can cost, one compare-and-swap to take a slot and one atomic add
// to give it back.
package floor

import "sync/atomic"

// cacheLine covers two 64-byte lines: Intel's adjacent-line prefetcher pulls lines in pairs,
// so a counter alone on one 64-byte line can still be fought over.
const cacheLine = 128

// Bulkhead admits at most a fixed number of calls at once.
type Bulkhead struct {
	limit int64
	_     [cacheLine - 8]byte
	// inFlight sits alone on its line, as the limiter's own count does, so that parallel
	// figures compare the same contention.
	inFlight atomic.Int64
	_        [cacheLine - 8]byte
}

// New returns a bulkhead that admits up to limit calls at once.
func New(limit int64) *Bulkhead { return &Bulkhead{limit: limit} }

// TryAcquire takes a slot, or reports false at once when all are taken.
func (b *Bulkhead) TryAcquire() bool {
	for {
		n := b.inFlight.Load()
		if n >= b.limit {
			return false
		}
		if b.inFlight.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release gives a slot back.
func (b *Bulkhead) Release() { b.inFlight.Add(-1) }
