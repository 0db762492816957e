package adaptivelimit

import (
	"math/bits"
	"sync/atomic"
)

// Slots are leased to Ps. The shared count (slots.taken) counts the slots that calls hold
// plus those that Ps hold idle in their caches, and never goes above the limit, so at most
// limit calls ever hold a slot. A call takes a slot from its P's cache, with an atomic on a
// line that only that P writes but other Ps may empty, and goes to the shared count only when
// the cache is empty, taking a batch. A finished call puts its slot back in its P's cache
// while the slots taken are within the limit, and gives it back to the shared count where they
// are above it, where the cache is full, or where callers wait for a slot, so that a freed
// slot goes to a waiter before it is cached.
//
// A caller that finds every slot taken takes the idle slots of every cache back to the
// shared count before it is rejected, so that it is rejected only when calls hold every
// slot. A lower limit than the slots taken is met the same way: no call takes a cached slot
// while the slots taken are above the limit, and the first call that finds them so empties
// the caches. A higher limit is there for the next call.
//
// Slots move into a cache after the shared count took them, and out of it before the count
// gives them back, so that the count never holds fewer than the held and cached slots.
//
// Before a P moves a slot it makes sure that it is the one P working, or that several are
// (settle, in inflight.go): the calls in flight that each call reports depend on it.
//
// Leases pay where several Ps share a limiter. With one P when New runs, there is nothing to
// share: calls take and free slots in the shared count, and the P keeps no cache.

// maxBatch is the most slots a P takes from the shared count at once; its cache holds twice
// as many.
const maxBatch = 16

// setLimit moves the limit, and the batches of slots that Ps take with it: a limit's worth of
// slots, split over the stripes (the Ps at New, rounded up to a power of two), in batches of
// a quarter of each one's share, so that the caches can hold at most half of the limit. The
// batch is kept beside the limit, which every finishing call reads with it.
func (l *Limiter) setLimit(limit int64) {
	if l.mode == leasing {
		shift := bits.Len(uint(l.stripes.mask)) + 2
		l.slots.batch.Store(min(max(limit>>shift, 1), maxBatch))
	}
	l.slots.limit.Store(limit)
}

// take takes a slot where the limit has one and returns the calls in flight with it, or 0.
func (l *Limiter) take() int64 {
	if l.mode != leasing {
		return l.slots.tryTake()
	}
	if l.slots.allHeld() {
		return 0 // a rejection, without pinning the P
	}
	s, own := l.stripes.pin()
	n := int64(0)
	if own {
		n = l.takeCached(s)
	}
	procUnpin()
	if n != 0 {
		return n
	}
	return l.takeShared()
}

// takeCached takes a slot from the cache of s, the stripe of the P that the calling
// goroutine is pinned to, and returns the calls in flight with it, or 0 where the P must
// settle first, the cache is empty or taken back, or the slots taken are above the limit,
// which no cached slot may then serve.
func (l *Limiter) takeCached(s *stripe) int64 {
	alone := l.window.alone.Load()
	if alone != s && alone != &many {
		return 0
	}
	g, c := l.slots.taken.Load(), atomic.LoadInt64(&s.cache)
	if c <= 0 || g > l.slots.limit.Load() || !atomic.CompareAndSwapInt64(&s.cache, c, c-1) {
		return 0
	}
	bump(&s.acquired, 1)
	return l.inFlight(s, alone, g-c+1)
}

// takeShared takes a slot from the shared count, with a batch for the P's cache, emptying the
// caches first where every slot is taken. It returns the calls in flight with it, or 0 where
// calls hold every slot. Slots it gave back to the shared count go to waiters first.
func (l *Limiter) takeShared() int64 {
	n, freed := l.takeBatch()
	if freed {
		l.passOn()
	}
	return n
}

// takeBatch is takeShared, but leaves the slots it freed to its caller: freed reports that it
// gave slots back to the shared count.
func (l *Limiter) takeBatch() (n int64, freed bool) {
	sl := &l.slots
	if l.mode != leasing {
		return sl.tryTake(), false
	}
	s, own := l.stripes.pin()
	defer procUnpin()
	alone := l.settle(s, own)
	if own {
		if n := l.takeCached(s); n != 0 { // settling may have made it the one P
			return n, false
		}
	}
	for {
		g, limit := sl.taken.Load(), sl.limit.Load()
		if g < limit {
			k := int64(1)
			if own {
				k = min(sl.batch.Load(), limit-g)
			}
			if !sl.taken.CompareAndSwap(g, g+k) {
				continue
			}
			if k > 1 && !l.cache(s, k-1) {
				sl.taken.Add(1 - k) // the cache was taken back meanwhile: the P is no longer alone
			}
			s.add(&s.acquired, 1, own)
			return l.inFlight(s, alone, sl.taken.Load()-cached(s)), freed
		}
		switch w := sl.idle.Load(); {
		case w == 0 && sl.taken.Load() >= sl.limit.Load(): // read after the word: see allHeld
			return 0, freed
		case w&cachedFlag == 0:
			continue // another P is emptying the caches, or has just: the slots are on their way
		}
		sl.idle.Add(reclaiming)
		sl.idle.And(^cachedFlag) // before the caches are read: see markCached
		if idle := l.stripes.reclaim(); idle > 0 {
			sl.taken.Add(-idle)
			l.relearn()
			freed = true
		}
		sl.idle.Add(-reclaiming)
	}
}

// cache adds k slots that the P of s took from the shared count to its cache, and reports
// whether it could: not where another P took the cache back (revoke).
func (l *Limiter) cache(s *stripe, k int64) bool {
	for {
		c := atomic.LoadInt64(&s.cache)
		if c < 0 {
			return false
		}
		if atomic.CompareAndSwapInt64(&s.cache, c, c+k) {
			l.slots.markCached()
			return true
		}
	}
}

// release frees the slot of a call that finished on the P of s, to which the goroutine is
// pinned: to the P's cache where the slots taken are within the limit, nobody waits for a
// slot and the cache holds fewer than two batches, else to the shared count. A slot that was
// not held makes it report false, leaving the counts as they were.
func (l *Limiter) release(s *stripe, own bool) (held bool) {
	if l.mode != leasing {
		return l.slots.release()
	}
	if alone := l.window.alone.Load(); alone != s && alone != &many {
		l.settle(s, own)
	}
	// Counted before the slot is freed, and after it was taken: InFlight, which reads these
	// counts, may count too few calls for a moment, never too many.
	s.add(&s.released, 1, own)
	g, c := l.slots.taken.Load(), atomic.LoadInt64(&s.cache)
	if own && c >= 0 && g > c && g <= l.slots.limit.Load() && c < 2*l.slots.batch.Load() &&
		l.wait.count.Load() == 0 && atomic.CompareAndSwapInt64(&s.cache, c, c+1) {
		if c == 0 {
			l.slots.markCached() // see markCached: a cache that held slots is flagged already
		}
		return true
	}
	// Only this P adds to its cache, and the shared count holds the slots cached and held at
	// every moment, so a count no higher than the cache read after it says that this call's
	// slot was not held.
	if g := l.slots.taken.Load(); g <= cached(s) || !l.slots.release() {
		s.add(&s.released, ^uint64(0), own)
		return false
	}
	return true
}

// free frees a slot, panics if it was not held, and passes it on to a waiter if any.
func (l *Limiter) free() {
	if !l.unhold() {
		panicFinishedTwice() // unpinned: the runtime does not let a pinned goroutine panic
	}
	l.passOn()
}

// unhold frees a slot, and reports whether it was held.
func (l *Limiter) unhold() bool {
	s, own := l.stripes.pin()
	held := l.release(s, own)
	procUnpin()
	return held
}

// revoked marks a cache that another P took back from the P that owns it (settle): the
// owner must settle before it moves a slot in or out of it again. It is the sign bit, so that
// a revoked cache reads as empty, and as not able to take a slot, without another compare.
const revoked = -1 << 63

// cached is the idle slots in the cache of s.
func cached(s *stripe) int64 { return atomic.LoadInt64(&s.cache) &^ revoked }

// reclaim empties every P's cache and returns how many idle slots it took. A cache that was
// taken back stays so.
func (ss *stripes) reclaim() int64 {
	var n int64
	for i := range ss.all() {
		c := &ss.at(i).cache
		for {
			k := atomic.LoadInt64(c)
			if k&^revoked == 0 || atomic.CompareAndSwapInt64(c, k, k&revoked) {
				n += k &^ revoked
				break
			}
		}
	}
	return n
}

// add adds d to one of the counters of s, a stripe of the calling P, with a plain add where
// the P owns it.
func (s *stripe) add(counter *uint64, d uint64, own bool) {
	if own {
		bump(counter, d)
	} else {
		atomic.AddUint64(counter, d)
	}
}
