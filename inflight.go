package adaptivelimit

import (
	"math"
	"sync/atomic"
)

// Each call reports the calls in flight when it took its slot, itself included; a window's
// most calls in flight is the most that its samples report. The count must be exact for calls
// made one at a time, by one goroutine that may move between Ps, and never above the truth
// when calls run at once. Under leases the shared count less a P's cache is a bound above it
// (upper, below): the calls in flight and the slots idle in other Ps' caches. Counting the
// calls exactly reads every P's stripe, cheap while one P works and a cache miss per P while
// several do, so the limiter notes which P works (window.alone):
//
//   - While one P alone moves slots, the slots idle elsewhere stay as they were: its calls
//     move slots only between the calls, its cache and the shared count. It counts once when
//     it takes the note, keeps the idle slots it found (stripe.idle), and each of its calls
//     is upper less those: exact, without reading another stripe. Emptying every cache makes
//     it count again (relearn).
//   - A P that finds another one noted takes the note (settle) before it moves a slot, and
//     then takes every other cache back (revoke), so that a P that was noted and moves a
//     slot of its cache after that fails, settles in turn and reads the new note. A
//     goroutine that the scheduler moves between Ps so takes the note with it.
//   - Only a P that the note names, or that finds that several work, moves slots between
//     the shared count and the calls or caches, and it says so first (startMoving); a P
//     that takes the note waits until those moves are over. A P reads the shared count
//     before the note, so a note that still names it says that no other P's move is in
//     the count: a P that was noted and acts on it a moment late cannot make the count of
//     the P noted after it, nor what that P learns, run above the truth.
//   - Past maxMoves moves in a window the note says that several Ps work at once: a P then
//     counts only where its bound rises above every bound it counted for since the last
//     recount, and its calls report 1 otherwise. The most calls in flight then comes from
//     the calls that counted; it may miss some, and is never above the truth. newWindow
//     clears the note again, less and less often while Ps keep working at once.

// many is what window.alone notes where several Ps work at once; nil notes that no P has
// moved a slot since the note was last cleared.
var many stripe

// maxMoves is how many times a window may see the note move from P to P before the limiter
// takes it that several Ps work at once: a goroutine moves between Ps at most a few times a
// window, while Ps working at once would move it at every call.
const maxMoves = 64

// unknownIdle is a stripe's idle until the P counts: above every bound, so that the P counts
// at its next call. It counts again, too, where a call would count fewer than 1, which only
// calls on other Ps as it counted can cause.
const unknownIdle = math.MaxInt64

// settle makes the P of s, pinned, the one P that works, where it may be, before it moves a
// slot, and returns the note: s, or &many.
func (l *Limiter) settle(s *stripe, own bool) *stripe {
	w := &l.window
	if !own {
		// A P beyond the stripes (GOMAXPROCS raised after New) shares its stripe: it cannot
		// be the one P.
		w.alone.Store(&many)
		return &many
	}
	for {
		if c := atomic.LoadInt64(&s.cache); c < 0 && !atomic.CompareAndSwapInt64(&s.cache, c, c&^revoked) {
			continue
		}
		a := w.alone.Load()
		if a == s || a == &many {
			return a
		}
		if w.moves.Add(1) > maxMoves {
			w.alone.Store(&many)
			return &many
		}
		atomic.StoreInt64(&s.idle, unknownIdle)
		if w.alone.CompareAndSwap(a, s) {
			// The other caches are taken back after the note moved, so that a P that finds
			// its cache taken back, and settles, reads the new note: it cannot go on as the
			// one P. Then the moves that other Ps began before they could see the note end.
			l.stripes.revoke(s)
			for l.slots.idle.Load() >= moving {
			}
			return s
		}
	}
}

// newWindow starts a window's count of moves. Where several Ps worked at once, it clears the
// note at the close of the first, second, fourth, eighth... window in a row that found it so,
// so that a goroutine that works alone again soon counts exactly again, and Ps that work at
// once pay for the try less and less often: they take it back at once, at the cost of a few
// moves. The caches are taken back first, so that no P moves a slot on the old note.
func (l *Limiter) newWindow() {
	w := &l.window
	w.moves.Store(0)
	if w.alone.Load() != &many {
		l.manyWindows = 0
		return
	}
	l.manyWindows++
	if l.manyWindows&(l.manyWindows-1) == 0 {
		l.stripes.revoke(nil)
		w.alone.CompareAndSwap(&many, nil)
	}
}

// revoke marks every cache but that of s as taken back.
func (ss *stripes) revoke(s *stripe) {
	for i := range ss.s {
		if o := &ss.s[i]; o != s {
			for {
				c := atomic.LoadInt64(&o.cache)
				if c < 0 || atomic.CompareAndSwapInt64(&o.cache, c, c|revoked) {
					break
				}
			}
		}
	}
}

// inFlight returns the calls in flight with a call that took a slot on the P of s, where
// upper is the shared count less the P's cache, after the call took its slot, and alone is
// the note the P settled or found before.
func (l *Limiter) inFlight(s *stripe, alone *stripe, upper int64) int64 {
	if n := knownInFlight(s, alone, upper); n > 0 {
		return n
	}
	return l.countOrNot(s, alone, upper)
}

// knownInFlight is inFlight where it needs no count: for the one P that works, upper less
// the slots idle elsewhere, and 1 where the bound did not rise above one counted for. It is 0
// or less where the P is to learn or count (countOrNot).
func knownInFlight(s, alone *stripe, upper int64) int64 {
	if alone == s {
		return upper - atomic.LoadInt64(&s.idle)
	}
	if uint64(upper) <= atomic.LoadUint64(&s.counted) {
		return 1
	}
	return 0
}

// countOrNot is inFlight where the P is not known to be the one P that works: it learns, if
// it has just become the one, and else counts where its bound rose.
//
//go:noinline
func (l *Limiter) countOrNot(s *stripe, alone *stripe, upper int64) int64 {
	own := s != l.stripes.overflow
	switch {
	case alone == s:
		// The one P learns: it counts, and keeps the slots idle in other Ps' caches. Calls
		// that end on other Ps meanwhile make the count below the truth and the idle slots
		// above it: its calls count too few, never too many. None can start there without
		// taking the note first (startMoving).
		n := max(l.stripes.held(), 1)
		atomic.StoreInt64(&s.idle, upper-n)
		return n
	case own && uint64(upper) <= atomic.LoadUint64(&s.counted): // from takeBatch
		return 1
	}
	return l.countInFlight(s, own, upper)
}

// relearn makes the Ps count again after one emptied every cache: the slots idle elsewhere
// are gone, and every P's bound fell with the shared count while the calls in flight stayed.
// The one P that works learns again, whichever it is now.
func (l *Limiter) relearn() {
	if a := l.window.alone.Load(); a != nil && a != &many {
		atomic.StoreInt64(&a.idle, unknownIdle)
	}
	l.stripes.recount()
}

// countInFlight counts the calls in flight, and records upper as counted for the P of s.
//
//go:noinline
func (l *Limiter) countInFlight(s *stripe, own bool, upper int64) int64 {
	n := l.stripes.held()
	if own {
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

// held returns the calls that hold a slot: every stripe's calls that took one, less every
// stripe's calls that freed one, read afterwards. The first sum is no more than the slots
// taken at any moment between the two passes, and the second at least those freed by then,
// so the count is never above the truth at that moment: it is exact when nothing runs beside
// it, and may be below zero while calls finish on other Ps.
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
