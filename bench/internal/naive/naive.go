// Package naive is the obvious way to write an adaptive limit: one mutex around the in-flight
// count and the window's sums. It exists to show what the lock costs per call; its update
// rule is deliberately simple (AIMD without drops).
package naive

import (
	"sync"
	"time"

	"github.com/resilience4cata/adaptivelimit"
)

// nanotime reads the runtime's monotonic clock as the limiter does: NanotimeClock and its
// method inline, leaving the one call to the runtime.
func nanotime() int64 { return adaptivelimit.NanotimeClock().Nanotime() }

// Limiter is a mutex-guarded adaptive limit that reads nanotime twice per call.
type Limiter struct {
	mu        sync.Mutex
	limit     int
	maxLimit  int
	inFlight  int
	windowEnd int64

	// the window's samples
	sum, count, maxInFlight int64
}

// New returns a limiter starting at limit, never above maxLimit.
func New(limit, maxLimit int) *Limiter {
	return &Limiter{limit: limit, maxLimit: maxLimit, windowEnd: nanotime() + int64(time.Second)}
}

// Acquire takes a slot and returns the call's start time, or false when the limit is full.
func (l *Limiter) Acquire() (start int64, ok bool) {
	l.mu.Lock()
	if l.inFlight >= l.limit {
		l.mu.Unlock()
		return 0, false
	}
	l.inFlight++
	l.maxInFlight = max(l.maxInFlight, int64(l.inFlight))
	l.mu.Unlock()
	return nanotime(), true
}

// Done frees the slot and adds the call's latency to the window, closing the window once it
// is over.
func (l *Limiter) Done(start int64) {
	now := nanotime()
	l.mu.Lock()
	l.inFlight--
	l.sum += now - start
	l.count++
	if now >= l.windowEnd {
		if l.maxInFlight*2 >= int64(l.limit) {
			l.limit = min(l.limit+1, l.maxLimit)
		}
		l.sum, l.count, l.maxInFlight = 0, 0, 0
		l.windowEnd = now + int64(time.Second)
	}
	l.mu.Unlock()
}
