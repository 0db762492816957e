package adaptivelimit

import (
	"math/bits"
	"runtime"
	"sync/atomic"
)

// slots is the shared count of slots taken, held or idle in Ps' caches, sharing a line with the
// limit and lease word that every call reads. Invariant: at most limit calls hold a slot, as
//   - taken rises only by a CAS within the limit less the ceiling's hold (class_ceiling.go);
//   - a slot enters a cache only from a call that held it.
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

// The lease word, leaseOn|cachedFlag plus sweeping times the Ps emptying caches now, says how
// far the Ps' caches of idle slots (stripe.cache) are in play (only under Limiter.leases).
//
//	word                 a call takes its slot                  a call frees its slot
//	0                    CAS on taken (takeShared)              to taken
//	leaseOn              CAS on taken                           to its P's cache if keep, else taken
//	leaseOn|cachedFlag   its P's cache, else CAS (takeLeased)   as above
//	cachedFlag           as above                               to taken
//	+k*sweeping          waits (take): idle slots going back    as above
//
//	transition                      by
//	0 -> leaseOn                    a CAS on taken that another P made fail (tryShared)
//	leaseOn -> leaseOn|cachedFlag   a slot put in an empty cache (keep, markCached)
//	w|cachedFlag -> w+sweeping      reclaim, by a call that found no slot or a window's close
//	w+sweeping -> w                 reclaim, once it emptied every cache into taken
//	leaseOn|w -> w                  a window's close (endLeases): one-at-a-time calls count exactly
//
// Only word 0 or leaseOn lets a call be rejected at once (allHeld). A lower limit empties the
// caches before anyone is admitted (takeLeased); steady overload empties them once (keep).
const (
	leaseOn    = 1 // Ps contended for taken in this window: finished calls may keep their slots
	cachedFlag = 2 // a P's cache may hold idle slots
	sweeping   = 4 // a P gives every cache's idle slots back to taken (reclaim)
)

const maxCached = 16 // the most idle slots a P's cache keeps

// allHeld reports whether calls hold every slot of the limit less hold, none idle or on its way
// back. The word is read first: a sweeping P returns the slots to taken before it says done.
func (s *slots) allHeld(hold int64) bool {
	w := s.lease.Load()
	return s.taken.Load() >= s.limit.Load()-hold && w <= leaseOn
}

// setLimit stores the algorithm's limit, with classes plus the never-lent reserves
// (classSet.setLimit), and returns it. cacheCap: a quarter of a P's share, in [1, maxCached].
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

// take takes a slot for a call of ce's class: n is the calls in flight, or 0 where every slot
// below its ceiling is held; leased, its P's stripe counted it; freed, it returned idle slots
// to taken (waiters get them first).
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

// takeFirst is take's first step: the P's cache while caches may hold idle slots, else taken.
// A classed call then counts itself: under leases in the same pin (takePinned), else on the
// shared overflow line (countShared), cheaper than a pin beside a CAS on a shared line anyway.
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

// takePinned is takeFirst with the P pinned; w is the lease word, read before.
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

// takeShared takes a slot from taken while no cache may hold one (w, read before taken) and
// returns the calls in flight, or 0: tryShared until no other P's CAS wins.
func (s *slots) takeShared(w, hold int64) int64 {
	n := s.tryShared(w, hold)
	for n < 0 {
		n = s.tryShared(s.lease.Load(), hold)
	}
	return n
}

// tryShared is takeShared's one try, within the inlining budget for acquire: -1 where another
// P's CAS on taken won, which sets leaseOn (inert without leases). In flight is taken, unless
// w re-read after the CAS says a cache may hold a slot (one cached meanwhile is in taken, its
// call gone): then 1, fewer, never more.
func (s *slots) tryShared(w, hold int64) int64 {
	n := s.taken.Load()
	if w > leaseOn || n >= s.limit.Load()-hold {
		return 0
	}
	if !s.taken.CompareAndSwap(n, n+1) {
		if w == 0 {
			s.lease.Or(leaseOn)
		}
		return -1
	}
	if s.lease.Load() > leaseOn {
		return 1
	}
	return n + 1
}

// takeLeased takes a slot from the cache of s's P (pinned; own: it owns s), else from taken,
// counts the call in s and returns the calls in flight, or 0. A cached slot is taken only while
// taken, which counts it, is within the limit less hold: so then are the calls holding one.
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

// reclaim empties every cache into taken where one may hold idle slots, and returns how many
// and whether it looked: not where none may, or another P is at it (the caller waits).
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

// releaseLeased frees to the P's cache where leaseOn and keep agree, else to taken; a leased
// call counts its free first (stripes.held), undone if the slot was not held.
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

// keep caches a finished call's slot in s, the pinned P's own, if under half the limit is
// taken (so it is seldom wanted elsewhere), under cacheCap, nobody waits, and s is unchanged.
// taken counts cached and held slots: taken <= cache says not held (slots.release finds it).
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

// markCached flags that a cache may hold idle slots, after they are put there: a P that
// clears the flag and then empties the caches sees them, or the flag is set again.
func (s *slots) markCached() {
	if s.lease.Load()&cachedFlag == 0 {
		s.lease.Or(cachedFlag)
	}
}

// release gives a slot back to taken, or reports false for one not held, which would let calls
// exceed the limit for good.
func (s *slots) release() (held bool) {
	if s.taken.Add(-1) < 0 {
		s.taken.Add(1)
		return false
	}
	return true
}

// inFlight returns the calls in flight, itself included, for a leased take on s's P: where w
// says no cache may hold a slot, upper, taken less the P's cache after the take (a slot being
// cached counts for its call until the flag is set); else stripes.held, read only where upper
// passed the P's bound counted this window, sparing a read of every P's line; otherwise 1.
func (l *Limiter) inFlight(s *stripe, w, upper int64) int64 {
	if w <= leaseOn {
		return upper
	}
	if uint64(upper) <= atomic.LoadUint64(&s.countedTo) {
		return 1
	}
	return l.countInFlight(s, upper)
}

// countInFlight is inFlight's cold path: it counts, and records upper as counted for s's P.
//
//go:noinline
func (l *Limiter) countInFlight(s *stripe, upper int64) int64 {
	n := l.stripes.held()
	if s != l.stripes.overflow {
		atomic.StoreUint64(&s.countedTo, uint64(upper))
	}
	return max(n, 1)
}

// recount resets the Ps' counted bounds to 1, which needs no count: at a window's start, and
// after a sweep.
func (ss *stripes) recount() {
	for i := range ss.all() {
		if c := &ss.at(i).countedTo; atomic.LoadUint64(c) > 1 {
			atomic.StoreUint64(c, 1)
		}
	}
}

// held returns the leased calls holding a slot: acquired less released, read after. A call
// counts after its take and before its free, so this is never above the truth between the two
// passes; exact when alone, it may be below zero while other Ps finish calls.
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

func add(counter *uint64, d uint64, own bool) {
	if own {
		bump(counter, d)
	} else {
		atomic.AddUint64(counter, d)
	}
}
