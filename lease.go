package adaptivelimit

import (
	"math/bits"
	"runtime"
	"sync/atomic"
)

// The slot path under leases (more than one P when New ran), of every call, classed or not.
// This is its one description.
//
// The shared count (slots.taken) is the slots that calls hold plus those idle in the Ps'
// caches (stripe.cache). It is raised only by a compare-and-swap that keeps it within the
// limit, and a slot enters a cache only from a call that held it, so at most limit calls ever
// hold a slot. The lease word beside the count (slots.lease) says how far the caches are in
// play: leaseOn, cachedFlag, and a count of the Ps emptying the caches (sweeping).
//
//   - While no cache may hold an idle slot, a call takes its slot from the shared count with
//     a compare-and-swap, without pinning its P, and frees it there, as with one P: the count
//     is then the calls in flight. A compare-and-swap that fails because another P took a
//     slot meanwhile sets leaseOn, until the window closes.
//   - With leaseOn, a call that finishes keeps its slot in its P's cache (keep) where nobody
//     waits, the cache holds fewer than cacheCap and less than half of the limit is taken:
//     there is room to spare, so a cached slot is seldom wanted on another P. It sets
//     cachedFlag after the slot is in. While cachedFlag is set, a call pins its P and takes a
//     slot from the P's cache with a compare-and-swap on the P's own line, or else from the
//     shared count (takeLeased), and counts itself in the P's stripe (counted).
//   - A call that finds every slot taken while cachedFlag is set clears it, gives every
//     cache's idle slots back to the count with a swap per P, and tries again (reclaim); one
//     that finds another P doing so waits for it. A call is so rejected only when calls hold
//     every slot. Near a full limit nothing is cached, so in steady overload this happens
//     once, and a rejection is three loads, two compares and its count. No call takes a
//     cached slot while the count is above the limit, so a lower limit empties the caches
//     before anyone is admitted; a higher limit is there for the next call.
//   - The closing window clears leaseOn and empties the caches, so that calls made one at a
//     time, by one goroutine on whatever P, never contend and use the exact shared count.
//
// A call of a priority class (classes.go) takes its slot by the same steps, with the limit
// less what its class's ceiling holds back (class_ceiling.go) in place of the limit: a compare
// more, on a line that changes only as the limit moves or a class is turned away. The count
// is the classless calls' one, so at most limit calls of all classes together hold a slot,
// whatever the ceilings read; a ceiling only decides which calls get the slots. Under leases a
// classed call pins its P to take its slot, also where no cache may hold one, and in that pin
// counts itself by class on its P's line (class_counts.go), after it took the slot; without
// them (one P when New ran) it takes its slot as a classless call does and counts itself on
// the shared overflow line, an add that costs less than a pin beside the compare-and-swap that
// already writes a shared line. It counts itself as freeing the slot in the pin that frees
// it, before it frees it. So a classed call costs a classless one's steps, its class's lookup
// (class_lookup.go, whose table points to the class's ceiling), its ceiling's two loads and
// its counts by class. A classed rejection is a classless one's three loads and two compares
// with its ceiling's, a load of what its ceiling took back, where that is not 0 a compare of
// the slots taken with the limit less the never-lent parts above its class (slots taken back
// from it lying free, it reads the clock to close a window that is over: heldBackIdle), a load
// of its class's word of shut, which says whether the classes below are shut already
// (class_ceiling.go: in steady overload they are, and the rejection takes nothing back from
// them), and its count by class in a pin: AcquireClass writes it out so that it makes no other
// call. A dry run's classed calls take no lease: they add to the
// count.
//
// Each call reports the calls in flight with it, itself included. Where the lease word, read
// before the count, says that no cache may hold an idle slot, that is the count (a slot that
// a call is putting in its cache is counted for that call until the flag is set after it).
// Else it is the calls counted in the stripes that took a slot less those that freed one
// (held: never above the truth), and, to spare a read of every P's line per call, only where
// the call's bound (the count less its P's cache) rose above the highest bound its P counted
// for in this window; a call that does not count reports 1.

// maxCached is the most idle slots a P's cache keeps.
const maxCached = 16

// setLimit moves the limit to the one the algorithm set, and the most slots that a P's cache
// keeps with it: a quarter of each P's share of the limit, between 1 and maxCached. The cap
// is kept beside the limit, which every finishing call reads with it. It returns the limit:
// with classes, the never-lent parts of the reserves above the lowest class come on top
// (classSet.setLimit).
func (l *Limiter) setLimit(limit int64) int64 {
	if l.mode == classed {
		limit = l.classes.setLimit(limit, int64(l.cfg.MaxLimit))
	}
	if l.leases {
		shift := bits.Len(uint(l.stripes.mask)) + 2
		l.slots.cacheCap.Store(min(max(limit>>shift, 1), maxCached))
	}
	l.slots.limit.Store(limit)
	return limit
}

// take takes a slot of the limit less hold (0, or what a class's ceiling holds back), and
// returns the calls in flight with it, or 0 where calls hold every such slot; counted, where
// the call was counted in its stripe's acquired; and freed, where it gave idle slots back to
// the shared count, which go to waiters first.
func (l *Limiter) take(hold int64) (n int64, counted, freed bool) {
	sl := &l.slots
	if !l.leases {
		n, ok := sl.tryAcquire(hold)
		if !ok {
			n = 0
		}
		return n, false, false
	}
	for {
		// The P's cache where the caches may hold idle slots, else the shared count, which
		// refuses every call while they may. Acquire writes this step out: see there.
		if w := sl.lease.Load(); w&cachedFlag != 0 {
			s, own := l.stripes.pin()
			n := l.takeLeased(s, own, w, hold)
			procUnpin()
			if n != 0 {
				return n, true, freed
			}
		} else if n := sl.takeShared(hold); n != 0 {
			return n, false, freed
		}
		if k, looked := l.reclaim(); looked {
			freed = freed || k > 0
			continue
		}
		switch w := sl.lease.Load(); {
		case w <= leaseOn && sl.taken.Load() >= sl.limit.Load()-hold: // read after the word: see allHeld
			return 0, false, freed
		case w >= sweeping:
			runtime.Gosched() // another P gives the idle slots back: they are on their way
		}
	}
}

// takeShared takes a slot of the limit less hold from the shared count where no cache may
// hold an idle one, and returns the slots taken with it, which are then the calls in flight;
// or 0, where a cache may hold one or every such slot is taken. A compare-and-swap that
// another P's take made fail turns leases on.
func (s *slots) takeShared(hold int64) int64 {
	for {
		w, n := s.lease.Load(), s.taken.Load()
		if w > leaseOn || n >= s.limit.Load()-hold {
			return 0
		}
		if s.taken.CompareAndSwap(n, n+1) {
			return n + 1
		}
		if w == 0 {
			s.lease.Or(leaseOn)
		}
	}
}

// takeLeased takes a slot from the cache of the P of s, to which the goroutine is pinned and
// which owns s or not, or else from the shared count, counting the call in the P's stripe,
// and returns the calls in flight with it, or 0 where every slot of the limit less hold is
// taken. w is the lease word, read before. A cached slot is taken only while the count,
// which holds it, is within the limit less hold: so is then the count of the calls that hold
// a slot.
func (l *Limiter) takeLeased(s *stripe, own bool, w, hold int64) (n int64) {
	sl := &l.slots
	g, limit := sl.taken.Load(), sl.limit.Load()-hold
	if c := atomic.LoadInt64(&s.cache); c > 0 && g <= limit && atomic.CompareAndSwapInt64(&s.cache, c, c-1) {
		bump(&s.acquired, 1) // only a P that owns its stripe caches
		n = l.inFlight(s, w, g-c+1)
	} else {
		for ; g < limit; g, limit = sl.taken.Load(), sl.limit.Load()-hold {
			if sl.taken.CompareAndSwap(g, g+1) {
				add(&s.acquired, 1, own)
				n = l.inFlight(s, w, g+1-atomic.LoadInt64(&s.cache))
				break
			}
		}
	}
	return n
}

// reclaim gives every cache's idle slots back to the shared count where a cache may hold
// some, and returns how many it gave back and whether it looked: not where no cache may hold
// any, or where another P looks at once (the caller waits for it).
func (l *Limiter) reclaim() (n int64, looked bool) {
	sl := &l.slots
	w := sl.lease.Load()
	if w&cachedFlag == 0 || !sl.lease.CompareAndSwap(w, w-cachedFlag+sweeping) {
		return 0, false
	}
	for i := range l.stripes.s {
		n += atomic.SwapInt64(&l.stripes.s[i].cache, 0)
	}
	if n != 0 {
		sl.taken.Add(-n)
		l.stripes.recount() // every P's bound fell with the count
	}
	sl.lease.Add(-sweeping)
	return n, true
}

// endLeases turns leases off and empties the caches, as a window closes.
func (l *Limiter) endLeases() {
	if l.slots.lease.Load()&leaseOn != 0 {
		l.slots.lease.And(^leaseOn)
	}
	if n, _ := l.reclaim(); n != 0 {
		l.passOn()
	}
}

// release frees the slot of p, a call that finished on the P of s, to which the goroutine is
// pinned. A slot that was not held makes it report false, leaving the counts as they were.
func (l *Limiter) release(s *stripe, own bool, p ticket) (held bool) {
	if l.mode == classed {
		return l.releaseClass(s, own, p)
	}
	if l.releasesShared(own, p.counted) {
		return l.slots.release()
	}
	return l.releaseLeased(s, own, p.counted)
}

// releasesShared reports whether a call that finished on a P, which owns its stripe or not,
// frees its slot in the shared count alone, as with one P: it was not counted under leases,
// and leases are off or the P keeps no cache.
func (l *Limiter) releasesShared(own, counted bool) bool {
	return !l.leases || !counted && (!own || l.slots.lease.Load()&leaseOn == 0)
}

// releaseLeased is release under leases: to the P's cache where leases are on and keep says
// so, else to the shared count.
func (l *Limiter) releaseLeased(s *stripe, own, counted bool) (held bool) {
	if counted {
		// Counted before the slot is freed, and after it was taken: the calls in flight
		// that the stripes add up to may be too few for a moment, never too many.
		add(&s.released, 1, own)
	}
	if own && l.slots.lease.Load()&leaseOn != 0 && l.keep(s) || l.slots.release() {
		return true
	}
	if counted {
		add(&s.released, ^uint64(0), own)
	}
	return false
}

// keep puts a finished call's slot in the cache of s, which the P that the goroutine is
// pinned to owns, and reports whether it did: where less than half of the limit is taken, the cache holds fewer than cacheCap, nobody waits, and the cache did not change
// meanwhile. The count holds the cached and held slots at every moment, so a count no higher
// than the cache says that the slot was not held: the shared count's release finds that.
func (l *Limiter) keep(s *stripe) bool {
	sl := &l.slots
	g, c := sl.taken.Load(), atomic.LoadInt64(&s.cache)
	if 2*g >= sl.limit.Load() || c >= sl.cacheCap.Load() || g <= c ||
		l.wait.count.Load() != 0 || !atomic.CompareAndSwapInt64(&s.cache, c, c+1) {
		return false
	}
	if c == 0 {
		sl.markCached() // a cache that held slots is flagged already: see markCached
	}
	return true
}

// free frees the slot of p, panics if it was not held, and passes it on to a waiter if any.
func (l *Limiter) free(p ticket) {
	if !l.unhold(p) {
		panicFinishedTwice() // unpinned: the runtime does not let a pinned goroutine panic
	}
	l.passOn()
}

// unhold frees the slot of p, and reports whether it was held.
func (l *Limiter) unhold(p ticket) bool {
	s, own := l.stripes.pin()
	held := l.release(s, own, p)
	procUnpin()
	return held
}

// inFlight returns the calls in flight with a call that took a slot on the P of s, under
// leases: upper, the shared count less the P's cache after the take, where the lease word w,
// read before the count, says that no cache may hold an idle slot; else a count.
func (l *Limiter) inFlight(s *stripe, w, upper int64) int64 {
	if w <= leaseOn {
		return upper
	}
	if uint64(upper) <= atomic.LoadUint64(&s.counted) {
		return 1
	}
	return l.countInFlight(s, upper)
}

// countInFlight counts the calls in flight, and records upper as counted for the P of s.
//
//go:noinline
func (l *Limiter) countInFlight(s *stripe, upper int64) int64 {
	n := l.stripes.held()
	if s != l.stripes.overflow {
		atomic.StoreUint64(&s.counted, uint64(upper))
	}
	return max(n, 1)
}

// recount forgets the bounds the Ps counted for, so that their next calls count the calls in
// flight again: at a window's start, and after the caches were emptied. A bound of 1 needs
// no count: the call is alone.
func (ss *stripes) recount() {
	for i := range ss.all() {
		if c := &ss.at(i).counted; atomic.LoadUint64(c) > 1 {
			atomic.StoreUint64(c, 1)
		}
	}
}

// held returns the calls that took a slot under leases and hold it: every stripe's calls
// that took one, less every stripe's calls that freed one, read afterwards. The first sum is
// no more than the slots taken at any moment between the two passes, and the second at least
// those freed by then, so the count is never above the truth at that moment: it is exact
// when nothing runs beside it, and may be below zero while calls finish on other Ps.
func (ss *stripes) held() int64 {
	var acquired, released uint64
	for i := range ss.all() {
		acquired += atomic.LoadUint64(&ss.at(i).acquired)
	}
	for i := range ss.all() {
		released += atomic.LoadUint64(&ss.at(i).released)
	}
	return int64(acquired - released)
}

// add adds d to a counter of a stripe of the calling P, with a plain add where the P owns it.
func add(counter *uint64, d uint64, own bool) {
	if own {
		bump(counter, d)
	} else {
		atomic.AddUint64(counter, d)
	}
}
