package adaptivelimit

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// slotState is what a call's first step reads and writes: the shared count, the limit, the
// lease word, every P's cache, and what a class's ceiling takes back.
type slotState struct {
	taken, limit, lease, cache, takenBack int64
	over                                  bool // the window is over
}

// slotEffect is what a first step did: the call's count in flight and lease, and the counts it
// left behind.
type slotEffect struct {
	n                    int64
	leased               bool
	taken, lease, cached int64
	rejected             uint64 // classless
	leasedIn, leasedOut  uint64
	acquired, rejectedBy [MaxClasses]uint64 // by class
	released             [MaxClasses]uint64
	takenBack            [MaxClasses]int64
}

// TestAcquireWritesOutItsSteps checks acquire's written-out steps, the one copy in the core
// (acquire.go), against the general path they copy, acquireAny: from the same state, a call of
// each admits or rejects alike, with the same count in flight and lease, and leaves the same
// counts behind.
func TestAcquireWritesOutItsSteps(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	states := []slotState{
		{taken: 0, limit: 4},
		{taken: 3, limit: 4},
		{taken: 4, limit: 4}, // full: the rejection
		{taken: 5, limit: 4}, // above a limit that fell
		{taken: 2, limit: 4, lease: leaseOn},
		{taken: 4, limit: 4, lease: leaseOn},
		{taken: 3, limit: 8, lease: leaseOn | cachedFlag, cache: 1},
		{taken: 8, limit: 8, lease: leaseOn | cachedFlag, cache: 1}, // full but for the caches
		{taken: 2, limit: 8, takenBack: 2},                          // a class below its ceiling
		{taken: 6, limit: 8, takenBack: 2},                          // at it, slots taken back lie free
		{taken: 6, limit: 8, takenBack: 2, over: true},              // and a close lends them again
		{taken: 8, limit: 8, takenBack: 2},                          // at it, every slot held
		{taken: 2, limit: 8, lease: cachedFlag, cache: 1, takenBack: 1},
	}
	for _, procs := range []int{1, 2} {
		for _, classed := range []bool{false, true} {
			for _, st := range states {
				if st.takenBack != 0 && !classed || st.cache != 0 && procs == 1 {
					continue
				}
				// The lowest class, and with classes the highest, whose call turned away takes
				// a slot back from the lowest.
				highests := []bool{false}
				if classed {
					highests = append(highests, true)
				}
				for _, highest := range highests {
					t.Run(fmt.Sprintf("procs=%d/classed=%v/highest=%v/%+v", procs, classed, highest, st), func(t *testing.T) {
						runtime.GOMAXPROCS(procs)
						written := stateLimiter(t, classed, st)
						general := stateLimiter(t, classed, st)
						runtime.GOMAXPROCS(1) // one P: both run on the P whose cache is set
						ce, ceAny := written.lowest, general.lowest
						if highest {
							ce, ceAny = &written.classes.ceilings.class[0], &general.classes.ceilings.class[0]
						}
						p, err := written.acquire(ce)
						q, errAny := general.acquireAny(ceAny)
						require.Equal(t, errAny, err)
						require.Equal(t, effectOf(general, q.inFlight, q.grant.leased()), effectOf(written, p.inFlight, p.grant.leased()))
						p.ticket, q.ticket = ticket{}, ticket{}
					})
				}
			}
		}
	}
}

// stateLimiter returns a limiter, classed or not, in state st, with its cache on every P.
func stateLimiter(t *testing.T, classed bool, st slotState) *Limiter {
	clock := NewManualClock()
	c := Config{Name: "state", Clock: clock}
	if classed {
		c.Classes = []Class{{Name: "high", Reserve: 0.5}, {Name: "low"}}
	}
	l, err := New(c)
	require.NoError(t, err)
	l.slots.limit.Store(st.limit)
	l.slots.taken.Store(st.taken)
	l.slots.lease.Store(st.lease)
	for i := range l.stripes.all() {
		atomic.StoreInt64(&l.stripes.at(i).cache, st.cache)
	}
	if l.lowest != nil {
		l.lowest.neverLent.Store(0)
		l.lowest.takenBack.Store(st.takenBack)
	}
	if st.over {
		clock.Advance(2 * time.Second)
	}
	return l
}

// effectOf reads what l's first step (or free) did, with the call's n in flight and lease.
func effectOf(l *Limiter, n int64, leased bool) slotEffect {
	e := slotEffect{n: n, leased: leased, taken: l.slots.taken.Load(), lease: l.slots.lease.Load()}
	for i := range l.stripes.all() {
		s := l.stripes.at(i)
		e.cached += atomic.LoadInt64(&s.cache)
		e.leasedIn += atomic.LoadUint64(&s.acquired)
		e.leasedOut += atomic.LoadUint64(&s.released)
		e.rejected += atomic.LoadUint64(&s.rejected)
	}
	if cs := l.classes; cs != nil {
		for i := range len(cs.counts) + 1 {
			for c := range cs.names {
				e.acquired[c] += atomic.LoadUint64(&cs.stripe(i).acquired[c])
				e.rejectedBy[c] += atomic.LoadUint64(&cs.stripe(i).rejected[c])
				e.released[c] += atomic.LoadUint64(&cs.stripe(i).released[c])
			}
		}
		for c := range cs.names {
			e.takenBack[c] = cs.ceilings.class[c].takenBack.Load()
		}
	}
	return e
}

// TestDoneWritesOutRelease checks done's written-out free to taken alone against release, the
// general path it copies: from the same state, a permit of each class and grant frees alike,
// or is found not held alike, and leaves the same counts behind.
func TestDoneWritesOutRelease(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	states := []slotState{
		{taken: 3, limit: 8},
		{taken: 0, limit: 8}, // a second finish
		{taken: 3, limit: 8, lease: leaseOn},
		{taken: 3, limit: 8, lease: leaseOn | cachedFlag, cache: 1},
		{taken: 6, limit: 8, lease: leaseOn},
		{taken: 3, limit: 8, lease: cachedFlag, cache: 1},
	}
	for _, procs := range []int{1, 2} {
		for _, classed := range []bool{false, true} {
			for _, leased := range []bool{false, true} {
				for _, st := range states {
					if st.cache != 0 && procs == 1 {
						continue
					}
					t.Run(fmt.Sprintf("procs=%d/classed=%v/leased=%v/%+v", procs, classed, leased, st), func(t *testing.T) {
						runtime.GOMAXPROCS(procs)
						written := stateLimiter(t, classed, st)
						general := stateLimiter(t, classed, st)
						runtime.GOMAXPROCS(1) // one P: both run on the P whose cache is set
						g := newGrant(0, leased)
						held := func() (held bool) {
							defer func() { held = recover() == nil }()
							written.done(ticket{l: written, start: untimed, inFlight: 1, grant: g}, nil, 0)
							return
						}()
						s, own := general.stripes.pin()
						heldAny := general.release(s, own, g)
						procUnpin()
						require.Equal(t, heldAny, held)
						require.Equal(t, effectOf(general, 0, false), effectOf(written, 0, false))
					})
				}
			}
		}
	}
}
