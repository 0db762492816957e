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
// (settle, in inflight.go), and it says in the shared line that it moves slots to or from the
// shared count (startMoving): the calls in flight that each call reports depend on both.
//
// Leases pay where several Ps share a limiter. With one P when New runs, there is nothing to
// share: calls take and free slots in the shared count, and the P keeps no cache.

// maxBatch is the most slots a P takes from the shared count at once; its cache holds twice
// as many.
const maxBatch = 16

// setLimit moves the limit, and the batches of slots that Ps take with it: a limit's worth of
// slots, split over the stripes (the Ps at New, rounded up to a power of two), in batches of
// a quarter of each one's share, so that the caches keep about half of the limit at most (a
// batch can land on a cache that calls refilled meanwhile, more while the limit moves). The
// batch is kept beside the limit, which every finishing call reads with it.
func (l *Limiter) setLimit(limit int64) {
	if l.mode == classed {
		l.classes.setLimit(limit)
	}
	if l.mode == leasing {
		shift := bits.Len(uint(l.stripes.mask)) + 2
		l.slots.batch.Store(min(max(limit>>shift, 1), maxBatch))
	}
	l.slots.limit.Store(limit)
}

// take takes a slot where the limit has one and returns the calls in flight with it, or 0.
// Acquire does the same, written out.
func (l *Limiter) take() int64 {
	if l.mode != leasing {
		return l.slots.tryTake()
	}
	_, limit, full := l.slots.allHeld()
	if full {
		return 0 // a rejection, without pinning the P
	}
	s, _ := l.stripes.pin()
	n := l.takeCached(s, limit)
	procUnpin()
	if n != 0 {
		return n
	}
	return l.takeShared()
}

// takeCached takes a slot from the cache of s, the stripe of the P that the calling
// goroutine is pinned to, and returns the calls in flight with it, or 0 where takeIdle says
// that it may not. limit is the limit, read before.
//
// The slots taken are read after the goroutine was pinned, and before the note: read before
// the pin, they may have fallen since, as other calls on the P gave slots back or a P emptied
// the caches; read after the note, they may count slots that another P moved after it took
// the note from this one. The calls in flight that this call reports would be above the
// truth. A P notes itself, or that several work, before it moves a slot, so a note that still
// names this P after the count says that the count holds no other P's moves.
func (l *Limiter) takeCached(s *stripe, limit int64) int64 {
	g := l.slots.taken.Load()
	alone, c := l.window.alone.Load(), atomic.LoadInt64(&s.cache)
	if !takeIdle(s, alone, c, g, limit) {
		return 0
	}
	bump(&s.acquired, 1)
	return l.inFlight(s, alone, g-c+1)
}

// takeIdle takes a slot from the cache of s, which held c, and reports whether it could: not
// where the P must settle first (alone is another P), the cache is empty or taken back, the
// slots taken (g) are above the limit, which no cached slot may then serve, or the cache
// changed since it held c. The overflow stripe's cache stays taken back.
func takeIdle(s, alone *stripe, c, g, limit int64) bool {
	return c > 0 && g <= limit && (alone == s || alone == &many) &&
		atomic.CompareAndSwapInt64(&s.cache, c, c-1)
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
	l.settle(s, own)
	if n := l.takeCached(s, sl.limit.Load()); n != 0 { // settling may have made it the one P
		return n, false
	}
	for {
		g, limit := sl.taken.Load(), sl.limit.Load()
		if g < limit {
			k := int64(1)
			if own {
				k = min(sl.batch.Load(), limit-g)
			}
			if !l.startMoving(s, own) {
				continue
			}
			if !sl.taken.CompareAndSwap(g, g+k) {
				sl.idle.Add(-moving)
				continue
			}
			if k > 1 && !l.cache(s, k-1) {
				sl.taken.Add(1 - k) // the cache was taken back meanwhile: the P is no longer alone
			}
			s.add(&s.acquired, 1, own)
			sl.idle.Add(-moving)
			// The note is read again, after the count: see takeCached.
			g := sl.taken.Load()
			return l.inFlight(s, l.window.alone.Load(), g-cached(s)), freed
		}
		switch w := sl.idle.Load(); {
		case w == 0 && sl.taken.Load() >= sl.limit.Load(): // read after the word: see allHeld
			return 0, freed
		case w&cachedFlag == 0:
			continue // another P is emptying the caches, or has just: the slots are on their way
		}
		if !l.startMoving(s, own) {
			continue
		}
		sl.idle.And(^cachedFlag) // before the caches are read: see markCached
		if idle := l.stripes.reclaim(); idle > 0 {
			sl.taken.Add(-idle)
			l.relearn()
			freed = true
		}
		sl.idle.Add(-moving)
	}
}

// startMoving says that the P of s, pinned, moves slots between the shared count and the
// calls or the caches: it takes slots for a call and its cache, or every cache's idle slots
// back. Meanwhile the count holds slots that are neither held nor cached, or held but not yet
// counted as taken (stripe.acquired), which a P that counts on its own (inflight.go) would
// take for idle slots or calls in flight; so a P takes the note only once no P moves slots
// (settle). That is where the P of s may still move them: where the note names it, or says
// that several Ps work. Else it settles again and reports false.
func (l *Limiter) startMoving(s *stripe, own bool) bool {
	l.slots.idle.Add(moving)
	if a := l.window.alone.Load(); a == s || a == &many {
		return true
	}
	l.slots.idle.Add(-moving)
	l.settle(s, own)
	return false
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
// pinned: to the P's cache where mayCache says so, else to the shared count. A slot that was
// not held makes it report false, leaving the counts as they were. Done does the same,
// written out.
func (l *Limiter) release(s *stripe, own bool) (held bool) {
	if l.mode != leasing {
		return l.slots.release()
	}
	g, c := l.slots.taken.Load(), atomic.LoadInt64(&s.cache)
	return own && l.mayCache(g, c) && l.cacheSlot(s, c) || l.releaseShared(s, own)
}

// mayCache reports whether a call that finished on a P may put its slot in the P's cache,
// which held c when the slots taken were g: where the cache was not taken back, the slots
// taken are within the limit, nobody waits for a slot and the cache holds fewer than two
// batches. Only the P adds to its cache, and the shared count holds the slots cached and held
// at every moment, so a count no higher than the cache says that the call's slot was not
// held: releaseShared finds that.
//
// A cache that was not taken back is the P's to fill: a P takes every other cache back before
// it takes the note that it works alone (settle), and the overflow stripe's stays taken back.
func (l *Limiter) mayCache(g, c int64) bool {
	sl := &l.slots
	return c >= 0 && g > c && g <= sl.limit.Load() && c < 2*sl.batch.Load() && l.wait.count.Load() == 0
}

// cacheSlot puts a finished call's slot in the cache of s, the stripe of the P that the
// goroutine is pinned to, which held c, and reports whether it could: not where the cache
// changed meanwhile.
func (l *Limiter) cacheSlot(s *stripe, c int64) bool {
	// Counted before the slot is freed, and after it was taken: InFlight, which reads these
	// counts, may count too few calls for a moment, never too many.
	bump(&s.released, 1)
	if !atomic.CompareAndSwapInt64(&s.cache, c, c+1) {
		bump(&s.released, ^uint64(0))
		return false
	}
	if c == 0 {
		l.slots.markCached() // see markCached: a cache that held slots is flagged already
	}
	return true
}

// releaseShared frees the slot of a call that finished on the P of s, pinned, to the shared
// count, settling the P first where it must.
func (l *Limiter) releaseShared(s *stripe, own bool) (held bool) {
	if alone := l.window.alone.Load(); alone != s && alone != &many {
		l.settle(s, own)
	}
	s.add(&s.released, 1, own)
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
