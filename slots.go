package adaptivelimit

import (
	"math/bits"
	"runtime"
	"sync/atomic"
)

// slots is the shared count of slots taken from the limit: those that calls hold, and those
// that Ps keep idle in their caches. Under leases it moves only when no P's cache serves, so
// it is padded away from everything else; the limit and the lease word share its line
// because every call reads all three.
//
// The invariant of the slot path, which every step below keeps: taken is raised only by a
// compare-and-swap that keeps it within the limit (less what the call's class's ceiling
// holds back, class_ceiling.go), and a slot enters a cache only from a call that held it, so
// at most limit calls ever hold a slot, whatever the classes.
type slots struct {
	_        pad
	taken    atomic.Int64
	limit    atomic.Int64
	cacheCap atomic.Int64 // the most idle slots a P's cache keeps under this limit
	lease    atomic.Int64 // the lease word: see below
	gap      atomic.Int64 // clock units between admissions while the limit is below 1; 0 while not (pace.go)
	paceGap  atomic.Int64 // clock units: the gap the last window's close set, which drops stretch (slowPace)
	next     atomic.Int64 // clock units: the earliest next admission while the limit is below 1 (pace.go)
	_        pad
}

// The lease word says how far the Ps' caches of idle slots (stripe.cache) are in play. It is
// leaseOn|cachedFlag plus sweeping times the Ps emptying the caches now. Leases are used only
// where more than one P ran when New did, and the limit is enforced (Limiter.leases).
//
//	word                 a call takes its slot          a call frees its slot
//	0                    CAS on taken (takeShared)      to taken
//	leaseOn              CAS on taken                   to its P's cache where keep says so, else to taken
//	leaseOn|cachedFlag   from its P's cache, else CAS   as above
//	                     on taken (takeLeased)
//	cachedFlag           as above                       to taken
//	+k*sweeping          waits (take): the idle slots   as above
//	                     are on their way back to taken
//
//	transition                            by
//	0 -> leaseOn                          a CAS on taken that another P made fail (takeShared)
//	leaseOn -> leaseOn|cachedFlag         a slot put in an empty cache (keep, markCached)
//	w|cachedFlag -> w+sweeping            a call that found no slot, or a window's close, empties
//	                                      every cache into taken (reclaim); -sweeping when done
//	leaseOn|w -> w                        a window's close (endLeases), so that calls made one
//	                                      at a time, on whatever P, use the exact count again
//
// A call is rejected at once only where the word is 0 or leaseOn and taken is at the limit:
// then calls hold every slot, and none is idle in a cache or on its way back (allHeld). Near a
// full limit nothing is cached (keep), so in steady overload the caches are emptied once. No
// call takes a cached slot while taken is above the limit, so a lower limit empties the caches
// before anyone is admitted.
const (
	leaseOn    = 1 // Ps contended for taken in this window: finished calls may keep their slots
	cachedFlag = 2 // a P's cache may hold idle slots
	sweeping   = 4 // a P gives every cache's idle slots back to taken (reclaim)
)

// maxCached is the most idle slots a P's cache keeps.
const maxCached = 16

// allHeld reports whether calls hold every slot of the limit less hold, what a class's
// ceiling holds back (0 without classes): every such slot is taken, and none is idle in a
// cache or on its way back. The lease word is read first: a P that empties the caches gives
// their slots back to taken before it says it is done.
func (s *slots) allHeld(hold int64) bool {
	w := s.lease.Load()
	return s.taken.Load() >= s.limit.Load()-hold && w <= leaseOn
}

// setLimit moves the limit to the one the algorithm set, and returns it: with classes, the
// never-lent parts of the reserves above the lowest class come on top (classSet.setLimit).
// A P's cache then keeps at most a quarter of each P's share of it, between 1 and maxCached.
func (l *Limiter) setLimit(limit int64) int64 {
	if l.classes != nil {
		limit = l.classes.setLimit(limit, int64(l.cfg.MaxLimit))
	}
	if l.leases {
		shift := bits.Len(uint(l.stripes.mask)) + 2
		l.slots.cacheCap.Store(min(max(limit>>shift, 1), maxCached))
	}
	l.slots.limit.Store(limit)
	return limit
}

// take takes a slot for a call of the class of ce (nil without classes), and returns the
// calls in flight with it, or 0 where calls hold every slot below its ceiling; leased, where
// the call was counted in its P's stripe; and freed, where it gave idle slots back to taken,
// which go to waiters first.
func (l *Limiter) take(ce *ceiling) (n int64, leased, freed bool) {
	sl := &l.slots
	for {
		hold := ce.hold()
		if n, leased = l.takeFirst(ce, hold); n != 0 {
			return n, leased, freed
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

// takeFirst is take's first step: a slot from the P's cache where the caches may hold idle
// slots, else from taken, which refuses every call while they may. A classed call counts
// itself by class after it took its slot: under leases in the pin that took it (takePinned),
// else on the shared overflow line (countShared), an add that costs less than a pin beside
// the compare-and-swap that writes a shared line already.
func (l *Limiter) takeFirst(ce *ceiling, hold int64) (n int64, leased bool) {
	w := l.slots.lease.Load()
	if w&cachedFlag != 0 || ce != nil && l.leases {
		return l.takePinned(ce, hold, w)
	}
	if n = l.slots.takeShared(w, hold); n != 0 && ce != nil {
		l.classes.countShared(ce.c)
	}
	return n, false
}

// takePinned is takeFirst where the goroutine pins its P, given the lease word w read before.
func (l *Limiter) takePinned(ce *ceiling, hold, w int64) (n int64, leased bool) {
	s, own := l.stripes.pin()
	if w&cachedFlag != 0 {
		n, leased = l.takeLeased(s, own, w, hold), true
	} else {
		n = l.slots.takeShared(w, hold)
	}
	if n != 0 && ce != nil {
		add(&l.classes.stripe(s.i).acquired[ce.c&(MaxClasses-1)], 1, own) // the mask spares a bounds check
	}
	procUnpin()
	return n, leased
}

// takeShared takes a slot of the limit less hold from taken where no cache may hold an idle
// one, and returns the calls in flight with it; or 0, where a cache may hold one or every such
// slot is taken. w is the lease word, read before taken (by the caller, the first time). A
// compare-and-swap that another P's take made fail turns leases on (without leases the flag
// is set and means nothing).
//   - The calls in flight are the slots taken, where the word read after the take says that
//     no cache may hold an idle slot; else 1, fewer, never more. A slot cached, and flagged,
//     between the word read before and the take is counted in taken, and its call is gone.
func (s *slots) takeShared(w, hold int64) int64 {
	for {
		n := s.taken.Load()
		if w > leaseOn || n >= s.limit.Load()-hold {
			return 0
		}
		if s.taken.CompareAndSwap(n, n+1) {
			if s.lease.Load() > leaseOn {
				return 1
			}
			return n + 1
		}
		if w == 0 {
			s.lease.Or(leaseOn)
		}
		w = s.lease.Load()
	}
}

// takeLeased takes a slot from the cache of the P of s, to which the goroutine is pinned and
// which owns s or not, or else from taken, counting the call in the P's stripe, and returns
// the calls in flight with it, or 0 where every slot of the limit less hold is taken. w is
// the lease word, read before. A cached slot is taken only while taken, which counts it, is
// within the limit less hold: so is then the count of the calls that hold a slot.
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

// reclaim gives every cache's idle slots back to taken where a cache may hold some, and
// returns how many it gave back and whether it looked: not where no cache may hold any, or
// where another P looks at once (the caller waits for it).
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

// releaseLeased frees a slot under leases: to the P's cache where leases are on and keep says
// so, else to taken. A leased call is counted as freeing its slot before it frees it
// (stripes.held says why), and the count is taken back where the slot was not held.
func (l *Limiter) releaseLeased(s *stripe, own, leased bool) (held bool) {
	if leased {
		add(&s.released, 1, own)
	}
	if own && l.slots.lease.Load()&leaseOn != 0 && l.keep(s) || l.slots.release() {
		return true
	}
	if leased {
		add(&s.released, ^uint64(0), own)
	}
	return false
}

// keep puts a finished call's slot in the cache of s, which the P that the goroutine is
// pinned to owns, and reports whether it did: where less than half of the limit is taken, the
// cache holds fewer than cacheCap, nobody waits, and the cache did not change meanwhile. There
// is room to spare, so a cached slot is seldom wanted on another P. taken counts the cached
// and held slots at every moment, so a taken no higher than the cache says that the slot was
// not held: slots.release finds that.
func (l *Limiter) keep(s *stripe) bool {
	sl := &l.slots
	g, c := sl.taken.Load(), atomic.LoadInt64(&s.cache)
	if 2*g >= sl.limit.Load() || c >= sl.cacheCap.Load() || g <= c ||
		l.wait.count.Load() != 0 || !atomic.CompareAndSwapInt64(&s.cache, c, c+1) {
		return false
	}
	if c == 0 {
		sl.markCached() // a cache that held slots is flagged already
	}
	return true
}

// markCached records that a P may hold idle slots. It is called after the slots are put in
// the cache: a P that clears the flag and then empties the caches sees them, or the flag is
// set again after it was cleared.
func (s *slots) markCached() {
	if s.lease.Load()&cachedFlag == 0 {
		s.lease.Or(cachedFlag)
	}
}

// release gives a slot back to taken. Releasing one that is not held would let the limiter
// admit more calls than its limit from then on, so it reports false instead, leaving the
// count as it was.
func (s *slots) release() (held bool) {
	if s.taken.Add(-1) < 0 {
		s.taken.Add(1)
		return false
	}
	return true
}

// inFlight returns the calls in flight with a call that took a slot on the P of s, under
// leases, itself included.
//   - Where the lease word w, read before taken, says that no cache may hold an idle slot, it
//     is upper, taken less the P's cache after the take (a slot that a call is putting in its
//     cache is counted for that call until the flag is set after it).
//   - Else it is the calls counted in the stripes that hold a slot (stripes.held), and only
//     where upper rose above the highest bound its P counted for in this window, to spare a
//     read of every P's line per call; a call that does not count reports 1.
func (l *Limiter) inFlight(s *stripe, w, upper int64) int64 {
	if w <= leaseOn {
		return upper
	}
	if uint64(upper) <= atomic.LoadUint64(&s.countedTo) {
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
		atomic.StoreUint64(&s.countedTo, uint64(upper))
	}
	return max(n, 1)
}

// recount forgets the bounds the Ps counted for, so that their next calls count the calls in
// flight again: at a window's start, and after the caches were emptied. A bound of 1 needs
// no count: the call is alone.
func (ss *stripes) recount() {
	for i := range ss.all() {
		if c := &ss.at(i).countedTo; atomic.LoadUint64(c) > 1 {
			atomic.StoreUint64(c, 1)
		}
	}
}

// held returns the leased calls that hold a slot: every stripe's calls that took one, less
// every stripe's calls that freed one, read afterwards.
//   - A call is counted after it takes its slot and before it frees it, so each sum is at
//     most the truth between the two passes: the count is never above it at that moment.
//   - It is exact when nothing runs beside it, and may be below zero while calls finish on
//     other Ps.
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
