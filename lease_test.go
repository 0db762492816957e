package adaptivelimit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var leaseLimits = []int{1, 2, 3, 16, 1000}

// leaseStress runs goroutines that take and free slots, and some that wait for one, on l, and
// returns how many calls were admitted. It fails the test if more calls hold a slot at once
// than most, or a patient waiter is not served.
func leaseStress(t *testing.T, l *Limiter, goroutines, calls, most int) int64 {
	t.Helper()
	var holders, admitted, rejected atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 14))
			for range calls {
				var p Permit
				var err error
				if r.IntN(4) == 0 {
					ctx, cancel := context.WithTimeout(context.Background(), time.Duration(r.IntN(50))*time.Microsecond)
					p, err = l.AcquireContext(ctx)
					cancel()
				} else {
					p, err = l.Acquire()
				}
				if err != nil {
					rejected.Add(1)
					continue
				}
				admitted.Add(1)
				holdAndFinish(t, r, &p, &holders, most)
			}
		})
	}
	wg.Wait()
	require.Equal(t, int64(goroutines*calls), admitted.Load()+rejected.Load())
	// Each goroutine holds at most one slot at a time.
	require.LessOrEqual(t, l.Snapshot().Last.MaxInFlight, goroutines, "the most in flight is never above the truth")
	require.LessOrEqual(t, l.Snapshot().Rejected, uint64(rejected.Load()), "never invented")
	require.Zero(t, l.Snapshot().Waiting)
	return admitted.Load()
}

// Under every limit, with more goroutines than Ps, never more calls hold a slot than the
// limit; afterwards no slot is lost and none invented.
func TestLeaseStress(t *testing.T) {
	forEachProcs(t, func(t *testing.T, procs int) {
		for _, limit := range leaseLimits {
			t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
				l, err := New(Config{InitialLimit: limit, MinLimit: limit, MaxLimit: limit,
					MaxWait: time.Hour, MaxWaiters: 64})
				require.NoError(t, err)
				admitted := leaseStress(t, l, 2*procs+2, 1000, limit)
				require.Positive(t, admitted)
				requireSettled(t, l, admitted)
				require.LessOrEqual(t, l.slots.taken.Load(), int64(limit), "held and cached, within the limit")
				requireExactly(t, l, limit)
			})
		}
	})
}

// A limit that moves every millisecond among 1, 2, 3 and 16, under 24 goroutines whose
// calls overlap, some of them waiting for a slot (the real clock; bounded: 1,000 calls
// each): never more calls hold a slot than the highest limit, which they can pass if the
// limit lets them, nor does a window see more; and once the calls are over, exactly the
// limit in force is there to take.
func TestLeaseStressMovingLimit(t *testing.T) {
	limits := []int{1, 2, 3, 16}
	const highest, goroutines, calls = 16, 24, 1000
	forEachProcs(t, func(t *testing.T, procs int) {
		l, err := New(Config{InitialLimit: highest, MaxLimit: 1000, Window: time.Millisecond, MinWindowSamples: 1,
			MaxWait: time.Hour, MaxWaiters: 64})
		require.NoError(t, err)
		var moves atomic.Int64
		r := rand.New(rand.NewPCG(uint64(procs), 15))
		l.algorithm = scripted{func() int {
			moves.Add(1)
			return limits[r.IntN(len(limits))]
		}}
		s := limiterSubject{Limiter: l, waits: true}
		o := holders(s, goroutines, calls, 0)
		checkAtMost(t, o, highest)
		require.Positive(t, moves.Load(), "the limit moved")
		snap := l.Snapshot()
		require.LessOrEqual(t, snap.Last.MaxInFlight, highest, "the most in flight is never above the truth")
		require.LessOrEqual(t, snap.Rejected, uint64(o.rejected), "never invented")
		require.Zero(t, snap.Waiting)
		requireSettled(t, l, o.admitted)
		checkSettled(t, s, l.Limit())
	})
}

// watched is scripted, and keeps the most calls in flight that any window saw.
type watched struct {
	scripted
	most *atomic.Int64
}

func (w watched) next(win window, d Decision) Decision {
	if n := int64(win.maxInFlight); n > w.most.Load() {
		w.most.Store(n) // only the closing goroutine writes
	}
	return w.scripted.next(win, d)
}

// No window's most calls in flight is above the goroutines that make calls, while windows of
// a millisecond move the limit and the note moves between Ps. A P that acts on a note a moment
// after another P took it (it settled before, or took its slot from the shared count while
// the other learnt) once made the other count slots on their way for calls in flight: this
// caught it in about one run in ten, so it runs many.
func TestLeaseWindowsNeverAboveTheTruth(t *testing.T) {
	forEachProcs(t, func(t *testing.T, procs int) {
		goroutines := 2*procs + 2
		for round := range 60 {
			l, err := New(Config{InitialLimit: 16, MaxLimit: 1000, Window: time.Millisecond, MinWindowSamples: 1,
				MaxWait: time.Hour, MaxWaiters: 64})
			require.NoError(t, err)
			r := rand.New(rand.NewPCG(uint64(procs), uint64(round)))
			var most atomic.Int64
			l.algorithm = watched{scripted{func() int { return leaseLimits[r.IntN(len(leaseLimits))] }}, &most}
			admitted := leaseStress(t, l, goroutines, 300, 1000)
			requireSettled(t, l, admitted)
			require.LessOrEqual(t, most.Load(), int64(goroutines), "round %d: a window's most calls in flight", round)
		}
	})
}

// A P added by raising GOMAXPROCS after New has no stripe of its own: its calls go straight to
// the shared count, and the bound holds.
func TestLeaseGrownGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	l, err := New(Config{InitialLimit: 3, MinLimit: 3, MaxLimit: 3})
	require.NoError(t, err)
	runtime.GOMAXPROCS(4 * l.stripes.all())
	admitted := leaseStress(t, l, 16, 1000, 3)
	requireSettled(t, l, admitted)
	requireExactly(t, l, 3)
}

// Goroutines spread over the Ps take and free slots, parking them in the Ps' caches; then one
// goroutine takes exactly limit permits: no parked slot makes it reject.
func TestNoFalseRejection(t *testing.T) {
	forEachProcs(t, func(t *testing.T, procs int) {
		for _, limit := range leaseLimits {
			t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
				l, err := New(Config{InitialLimit: limit, MinLimit: limit, MaxLimit: limit})
				require.NoError(t, err)
				park(l, procs)
				if limit >= 16 && l.mode == leasing {
					require.Positive(t, l.cached(), "slots are parked")
				}
				requireExactly(t, l, limit)
				parkEverywhere(l)
				requireExactly(t, l, limit)
			})
		}
	})
}

// A lower limit empties the caches before a call is admitted above it; a higher one admits
// at once.
func TestLeaseLimitMoves(t *testing.T) {
	forEachProcs(t, func(t *testing.T, procs int) {
		limit := 16
		l, clock := newManual(t, Config{InitialLimit: 16, MaxLimit: 100, MinWindowSamples: 1})
		l.algorithm = scripted{func() int { return limit }}
		if l.mode == leasing {
			l.slots.lease.Or(leaseOn) // as a take that another P's made fail does
		}
		for range 3 { // park slots
			held := acquireN(t, l, 10)
			for i := range held {
				held[i].Done(nil)
			}
		}
		require.Equal(t, procs > 1, l.cached() > 0, "slots are parked where there are leases")

		limit = 2
		clock.Advance(time.Second)
		acquireN(t, l, 1)[0].Done(nil) // closes the window
		require.Equal(t, 2, l.Limit())
		requireExactly(t, l, 2)
		require.LessOrEqual(t, l.slots.taken.Load(), int64(2), "the caches were emptied")

		limit = 40
		clock.Advance(time.Second)
		acquireN(t, l, 1)[0].Done(nil)
		require.Equal(t, 40, l.Limit())
		requireExactly(t, l, 40)
	})
}

// A limit lowered while caches hold idle slots (as a finishing call that read leases on a
// moment before a window closed may leave them): no cached slot serves a call above it.
func TestLeaseLowerLimitDrainsCaches(t *testing.T) {
	forEachProcs(t, func(t *testing.T, procs int) {
		l, err := New(Config{InitialLimit: 64, MaxLimit: 64})
		require.NoError(t, err)
		parkEverywhere(l)
		l.setLimit(2)
		requireExactly(t, l, 2)
	})
}

// One goroutine's calls are counted exactly, in InFlight and in the window's most calls in
// flight, even with slots parked in other Ps' caches.
func TestLeaseExactInFlight(t *testing.T) {
	forEachProcs(t, func(t *testing.T, procs int) {
		l, clock := newManual(t, Config{InitialLimit: 100, MinLimit: 100, MaxLimit: 100, MinWindowSamples: 1})
		park(l, procs)
		for _, n := range []int{7, 100, 1, 30} {
			clock.Advance(time.Second)
			acquireN(t, l, 1)[0].Done(nil) // closes the window
			held := acquireN(t, l, n)
			require.Equal(t, n, l.InFlight())
			for i := range held {
				held[i].Done(nil)
				require.Equal(t, n-1-i, l.InFlight())
			}
			clock.Advance(time.Second)
			acquireN(t, l, 1)[0].Done(nil)
			require.Equal(t, n, l.Snapshot().Last.MaxInFlight)
		}
	})
}

// With idle slots parked in every P's cache, one goroutine's calls still report the calls in
// flight exactly: never the slots idle in other Ps' caches.
func TestLeaseInFlightWithParkedSlots(t *testing.T) {
	forEachProcs(t, func(t *testing.T, procs int) {
		l, clock := newManual(t, Config{InitialLimit: 200, MinLimit: 200, MaxLimit: 200, MinWindowSamples: 1})
		parkEverywhere(l)
		if l.mode == leasing {
			require.Positive(t, l.cached())
		}
		held := acquireN(t, l, 20)
		require.Equal(t, 20, l.InFlight())
		for i := range held {
			held[i].Done(nil)
		}
		clock.Advance(time.Second)
		acquireN(t, l, 1)[0].Done(nil) // closes the window
		require.Equal(t, 20, l.Snapshot().Last.MaxInFlight)
	})
}

// Two goroutines finishing calls that hold slots of a limit of 1 and 2 hand the slots over
// between Ps: every permit is taken and freed, and the limit is never passed.
func TestLeaseHandOff(t *testing.T) {
	forEachProcs(t, func(t *testing.T, procs int) {
		for _, limit := range []int{1, 2} {
			l, err := New(Config{InitialLimit: limit, MinLimit: limit, MaxLimit: limit})
			require.NoError(t, err)
			permits := make(chan *Permit, limit)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for p := range permits {
					p.Done(nil)
				}
			}()
			for range 2000 {
				p, err := l.Acquire()
				if err != nil {
					runtime.Gosched()
					continue
				}
				require.LessOrEqual(t, l.InFlight(), limit)
				permits <- &p
			}
			close(permits)
			<-done
			requireExactly(t, l, limit)
		}
	})
}

// One goroutine drives a limiter through a scripted run, on a manual clock: calls start and
// end out of order, many at once, across windows, with slots parked in other Ps' caches and
// goroutines on every P to move it between them. Every window's decision, the calls in flight
// it saw included, is what it is with one P and no leases.
func TestLeaseOneGoroutineReplaysExactly(t *testing.T) {
	run := func(procs int) []Decision {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		stop := make(chan struct{})
		var busy sync.WaitGroup
		for range procs {
			busy.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
						runtime.Gosched()
					}
				}
			})
		}
		defer busy.Wait()
		defer close(stop)
		l, clock := newManual(t, Config{InitialLimit: 40, MaxLimit: 200, MinWindowSamples: 5, Window: 10 * time.Millisecond})
		var parking sync.WaitGroup // slots in every P's cache, without a sample
		if l.mode == leasing {
			l.slots.lease.Or(leaseOn)
		}
		for range 4 * procs {
			parking.Go(func() {
				for range 100 {
					if p, err := l.Acquire(); err == nil {
						runtime.Gosched()
						p.Cancel()
					}
				}
			})
		}
		parking.Wait()
		// A window of calls on this goroutine: at its close the limiter notes that several Ps
		// worked at once no more.
		for range 5 {
			acquireN(t, l, 1)[0].Done(nil)
		}
		clock.Advance(10 * time.Millisecond)
		acquireN(t, l, 1)[0].Done(nil)
		start := l.Snapshot().Windows
		require.Equal(t, uint64(1), start)
		r := rand.New(rand.NewPCG(7, 14))
		var held []Permit
		var decisions []Decision
		for range 20000 {
			switch k := r.IntN(10); {
			case k < 5:
				if p, err := l.Acquire(); err == nil {
					held = append(held, p.Move())
				}
			case k < 9 && len(held) > 0:
				i := r.IntN(len(held))
				held[i].Done(nil)
				held = append(held[:i], held[i+1:]...)
			default:
				clock.Advance(time.Duration(r.IntN(3)) * time.Millisecond)
				runtime.Gosched()
			}
			if s := l.Snapshot(); len(decisions) < int(s.Windows-start) {
				decisions = append(decisions, s.Last)
			}
		}
		require.Zero(t, l.slots.lease.Load(), "one goroutine: no leases, no caches")
		return decisions
	}
	want := run(1)
	require.Greater(t, len(want), 100, "the script closes windows")
	for _, procs := range []int{2, 4, 8} {
		got := run(procs)
		for i := range min(len(got), len(want)) {
			require.Equal(t, want[i], got[i], "GOMAXPROCS %d, window %d", procs, i+1)
		}
		require.Len(t, got, len(want), "GOMAXPROCS %d", procs)
	}
}

// As many goroutines as slots, each finishing its call before it starts the next: however
// the slots move between the Ps' caches, and whoever empties them, no call is rejected.
func TestLeaseNoRejectionWithASlotEach(t *testing.T) {
	forEachProcs(t, func(t *testing.T, procs int) {
		goroutines := 2 * procs
		l, err := New(Config{InitialLimit: goroutines, MinLimit: goroutines, MaxLimit: goroutines})
		require.NoError(t, err)
		var rejected atomic.Int64
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() {
				for i := range 2000 {
					p, err := l.Acquire()
					if err != nil {
						rejected.Add(1)
						continue
					}
					if i%7 == 0 {
						runtime.Gosched()
					}
					p.Done(nil)
				}
			})
		}
		wg.Wait()
		require.Zero(t, rejected.Load())
		requireSettled(t, l, int64(goroutines*2000))
	})
}
