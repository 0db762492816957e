package adaptivelimit

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Random sequences of calls, outcomes and clock moves, with random valid configurations, in
// every mode in turn: whatever happens, the limit stays in its bounds, no more calls hold a
// slot than the limit allowed when they took it, a call of the highest class is rejected only
// with every slot held, and every slot comes back.
func TestRandomOperations(t *testing.T) {
	errs := []error{nil, nil, nil, context.DeadlineExceeded, context.Canceled, errors.New("404")}
	for seed := range uint64(30) {
		r := rand.New(rand.NewPCG(seed, 99))
		m := testModes[seed%uint64(len(testModes))]
		minLimit := 1 + r.IntN(10)
		c := Config{
			Algorithm:        algorithms[r.IntN(len(algorithms))],
			MinLimit:         minLimit,
			MaxLimit:         minLimit + r.IntN(100),
			MinWindowSamples: 1 + r.IntN(20),
			Window:           time.Duration(1+r.IntN(1000)) * time.Millisecond,
			Smoothing:        0.01 + 0.99*r.Float64(),
			RTTTolerance:     1 + 3*r.Float64(),
			LongWindow:       1 + r.IntN(1000),
			QueueSize:        1 + r.IntN(10),
			BackoffRatio:     0.5 + 0.49*r.Float64(),
			LossThreshold:    0.001 + 0.5*r.Float64(),
			DelayTolerance:   1 + r.Float64(),
			IncreaseRatio:    0.01 + 0.99*r.Float64(),
			ProbeInterval:    r.IntN(20),
			RelearnAfter:     1 + r.IntN(10),
			LatencyCeiling:   time.Duration(r.IntN(3)) * 300 * time.Millisecond,
			ProbeMultiplier:  1 + r.IntN(40),
			Random:           rand.New(rand.NewPCG(seed, 100)).Float64,
		}
		if seed%3 == 0 {
			c.Alpha = 1 + r.IntN(5)
			c.Beta = c.Alpha + 1 + r.IntN(10)
		}
		l, clock := m.newManual(t, c)
		var held []Permit
		for step := range 10_000 {
			switch op := r.IntN(10); {
			case op < 5:
				limit := l.Limit()
				class := m.class(r)
				p, err := m.acquire(l, class)
				if err != nil {
					if !errors.Is(err, ErrLimitExceeded) || class == m.class(nil) && len(held) < limit {
						t.Fatalf("seed %d step %d: %v for class %q with %d of %d slots held", seed, step, err, class, len(held), limit)
					}
					continue
				}
				held = append(held, p.Move())
				if m.enforced() && len(held) > limit {
					t.Fatalf("seed %d step %d: %d admitted, limit %d", seed, step, len(held), limit)
				}
			case op < 9 && len(held) > 0:
				i := r.IntN(len(held))
				p := held[i].Move()
				held[i] = held[len(held)-1].Move()
				held = held[:len(held)-1]
				if op == 8 {
					p.Cancel()
				} else {
					p.Done(errs[r.IntN(len(errs))])
				}
			default:
				clock.Advance(time.Duration(r.Int64N(int64(c.Window))))
			}
			if s := l.Snapshot(); s.Limit < c.MinLimit || s.Limit > c.MaxLimit || s.InFlight != len(held) {
				t.Fatalf("seed %d step %d: limit %d outside [%d, %d], or %d in flight with %d held",
					seed, step, s.Limit, c.MinLimit, c.MaxLimit, s.InFlight, len(held))
			}
		}
		for p := range each(held) {
			p.Done(nil)
		}
		require.Zero(t, l.InFlight(), "seed %d: every slot came back", seed)
		require.Positive(t, l.Snapshot().Windows, "seed %d: windows closed", seed)
	}
}

// The invariant checks below drive a subject: the Limiter, or one of the deliberately broken
// limiters of TestInvariantChecksCatchBrokenLimiters, which shows that each check fails
// where its invariant does not hold.

// Many goroutines whose calls overlap, on fixed limits, in every mode: the limit is filled
// and never passed (a dry run rejects nothing), every slot comes back, and every sample is
// counted once.
func TestNoOverAdmission(t *testing.T) {
	const goroutines, calls = 12, 400
	forEachMode(t, testModes, func(t *testing.T, m testMode) {
		forEachProcs(t, func(t *testing.T, procs int) {
			for _, limit := range []int{1, 2, 5} {
				t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
					l, clock := fixedOnManual(t, m, limit)
					s := limiterSubject{Limiter: l, mode: m}
					o := holders(s, goroutines, repeat(calls), limit)
					checkMost(t, s, o, limit)
					checkSettled(t, s, limit)
					checkCounted(t, l, clock, o)
					rejected := l.Snapshot().Rejected
					if !m.enforced() {
						require.LessOrEqual(t, rejected, uint64(o.admitted+int64(limit)+2), "a would-be rejection is an admitted call")
						return
					}
					// Rejections are counted with plain increments on counters that goroutines
					// may share: a count can be lost to a race, never invented.
					seen := uint64(o.rejected) + 1 // checkSettled's
					require.LessOrEqual(t, rejected, seen, "never invented")
					require.GreaterOrEqual(t, rejected, seen*95/100, "few lost")
				})
			}
		})
	})
}

// Under every limit, in every mode that enforces it, with more goroutines than Ps and some of
// them waiting for a slot, never more calls hold a slot than the limit; afterwards no slot is
// lost and none invented.
func TestNoOverAdmissionWithWaiters(t *testing.T) {
	forEachMode(t, enforcedModes, func(t *testing.T, m testMode) {
		forEachProcs(t, func(t *testing.T, procs int) {
			for _, limit := range leaseLimits {
				t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
					l := m.new(t, Config{InitialLimit: limit, MinLimit: limit, MaxLimit: limit,
						MaxWait: time.Hour, MaxWaiters: 64})
					o := leaseStress(t, limiterSubject{Limiter: l, mode: m, waits: true}, 2*procs+2, repeat(1000), limit)
					require.Positive(t, o.admitted)
					requireSettled(t, l, o.admitted)
					require.LessOrEqual(t, slotsTaken(l), int64(limit), "held and cached, within the limit")
					requireExactly(t, l, limit)
				})
			}
		})
	})
}

// A limit that moves every millisecond among 1, 2, 3 and 16, in every mode that enforces it,
// under 24 goroutines whose calls overlap, some of them waiting for a slot (the real clock;
// bounded: 1,000 calls each): never more calls hold a slot than the highest limit allows,
// which they can pass if the limit lets them, nor does a window see more; and once the calls
// are over, exactly the limit in force is there to take.
func TestNoOverAdmissionMovingLimit(t *testing.T) {
	limits := []int{1, 2, 3, 16}
	const goroutines, calls = 24, 1000
	forEachMode(t, enforcedModes, func(t *testing.T, m testMode) {
		forEachProcs(t, func(t *testing.T, procs int) {
			l := m.new(t, Config{InitialLimit: 16, MaxLimit: 1000, Window: time.Millisecond, MinWindowSamples: 1,
				MaxWait: time.Hour, MaxWaiters: 64})
			highest := mostSlots(l, 16)
			var moves atomic.Int64
			r := rand.New(rand.NewPCG(uint64(procs), 15))
			setAlgorithm(l, scripted{func() int {
				moves.Add(1)
				return limits[r.IntN(len(limits))]
			}})
			s := limiterSubject{Limiter: l, mode: m, waits: true}
			o := holders(s, goroutines, repeat(calls), 0)
			checkAtMost(t, o, highest)
			require.Positive(t, moves.Load(), "the limit moved")
			snap := l.Snapshot()
			require.LessOrEqual(t, snap.Last.MaxInFlight, highest, "the most in flight is never above the truth")
			require.LessOrEqual(t, snap.Rejected, uint64(o.rejected), "never invented")
			require.Zero(t, snap.Waiting)
			requireSettled(t, l, o.admitted)
			checkSettled(t, s, l.Limit())
		})
	})
}

// A broken limiter fails the invariant checks (helpers_test.go), in every mode: each mutation
// is caught by the checks named, and the limiter unbroken passes them all. In a dry run,
// admitting everything is no mutation.
func TestInvariantChecksCatchBrokenLimiters(t *testing.T) {
	forEachMode(t, testModes, func(t *testing.T, m testMode) { invariantChecksCatch(t, m) })
}

func invariantChecksCatch(t *testing.T, m testMode) {
	const limit, goroutines, calls = 3, 8, 200
	for _, tc := range []struct {
		name   string
		broken func(s subject) subject
		caught []string
	}{
		{"admit everything", func(s subject) subject { return admitAll{s} }, []string{"most", "settled"}},
		{"reject below the limit", func(s subject) subject { return rejectEarly{s, limit, new(atomic.Int64)} }, []string{"most", "settled"}},
		{"skip a release", func(s subject) subject { return &mutated{subject: s, skipRelease: true} }, []string{"settled"}},
		{"lose a sample", func(s subject) subject { return &mutated{subject: s, loseSample: true} }, []string{"counted"}},
		{"invent a sample", func(s subject) subject { return &mutated{subject: s, inventSample: true} }, []string{"counted"}},
		{"lose a drop", func(s subject) subject { return &mutated{subject: s, loseDrop: true} }, []string{"counted"}},
		{"unbroken", func(s subject) subject { return s }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, clock := fixedOnManual(t, m, limit)
			s := tc.broken(limiterSubject{Limiter: l, mode: m})
			o := holders(s, goroutines, calls, limit)
			var failed []string
			for _, check := range []struct {
				name string
				run  func(r reporter)
			}{
				{"most", func(r reporter) { checkMost(r, s, o, limit) }},
				{"settled", func(r reporter) { checkSettled(r, s, limit) }},
				{"counted", func(r reporter) { checkCounted(r, l, clock, o) }},
			} {
				var rec recorder
				check.run(&rec)
				if len(rec.failures) > 0 {
					failed = append(failed, check.name)
				}
			}
			caught := tc.caught
			if !m.enforced() && tc.name == "admit everything" {
				caught = nil // what a dry run does
			}
			for _, want := range caught {
				require.Contains(t, failed, want, "%s is not caught by the %s check", tc.name, want)
			}
			if caught == nil {
				require.Empty(t, failed)
			}
		})
	}
}

// admitAll admits every call: a rejection is a call that holds nothing.
type admitAll struct{ subject }

func (a admitAll) acquire(r *rand.Rand) (finisher, bool) {
	if p, ok := a.subject.acquire(r); ok {
		return p, true
	}
	return new(Permit), true
}

// rejectEarly rejects the call that would fill the limit.
type rejectEarly struct {
	subject
	limit int
	held  *atomic.Int64 // the calls it let hold a slot: exact, where InFlight may count fewer
}

func (e rejectEarly) acquire(r *rand.Rand) (finisher, bool) {
	p, ok := e.subject.acquire(r)
	if !ok {
		return p, false
	}
	if e.held.Add(1) >= int64(e.limit) {
		e.held.Add(-1)
		p.Cancel()
		return nil, false
	}
	return earlyPermit{p, e.held}, true
}

// earlyPermit is a permit that rejectEarly let through: it leaves held before it frees.
type earlyPermit struct {
	finisher
	held *atomic.Int64
}

func (p earlyPermit) Done(err error) {
	p.held.Add(-1)
	p.finisher.Done(err)
}

func (p earlyPermit) Cancel() {
	p.held.Add(-1)
	p.finisher.Cancel()
}

// mutated breaks one call, the first that its flag applies to: a single slot not freed, or
// a single sample lost or invented, or a single drop lost, is enough to fail a check.
type mutated struct {
	subject
	skipRelease, loseSample, inventSample, loseDrop bool
	broke                                           atomic.Bool
}

func (m *mutated) acquire(r *rand.Rand) (finisher, bool) {
	p, ok := m.subject.acquire(r)
	if !ok {
		return p, false
	}
	return mutatedPermit{p, m}, true
}

type mutatedPermit struct {
	finisher
	m *mutated
}

// breaks reports whether the mutation applies to this finish: the first time only.
func (p mutatedPermit) breaks(applies bool) bool {
	return applies && p.m.broke.CompareAndSwap(false, true)
}

func (p mutatedPermit) Done(err error) {
	switch {
	case p.breaks(p.m.skipRelease):
	case p.breaks(p.m.loseSample && err == nil):
		p.finisher.Cancel()
	case p.breaks(p.m.loseDrop && errors.Is(err, context.DeadlineExceeded)):
		p.finisher.Done(nil)
	default:
		p.finisher.Done(err)
	}
}

func (p mutatedPermit) Cancel() {
	switch {
	case p.breaks(p.m.skipRelease):
	case p.breaks(p.m.inventSample):
		p.finisher.Done(nil)
	default:
		p.finisher.Cancel()
	}
}

// Concurrent calls that close windows on the real clock (1 ms windows; bounded: 8 goroutines
// until 100 windows have closed, for at most 10 s), with snapshots read beside them: windows
// close one at a time and no change of the limit is lost, each starting from the limit the
// one before it left; the changes seen are the snapshot's LimitChanges; the limit stays in
// its bounds, counters never go backwards, and every slot comes back.
func TestConcurrentWindows(t *testing.T) {
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		const goroutines, windows = 8, 100
		var changes limitChanges
		l, err := New(Config{Algorithm: alg, InitialLimit: 4, MaxLimit: 16, MinWindowSamples: 1, Window: time.Millisecond,
			OnLimitChange: changes.add})
		require.NoError(t, err)
		changes.limit = l.Limit()
		stop := make(chan struct{})
		var watcher sync.WaitGroup
		var checks atomic.Int64
		watcher.Go(func() { watch(t, l, stop, &checks) })
		deadline := time.Now().Add(10 * time.Second)
		var workers sync.WaitGroup
		for g := range goroutines {
			workers.Go(func() {
				for i := 0; i%64 != 0 || l.Snapshot().Windows < windows && time.Now().Before(deadline); i++ {
					p, err := l.Acquire()
					if err != nil {
						runtime.Gosched()
						continue
					}
					runtime.Gosched() // hold the slot while others run
					if (g+i)%13 == 0 {
						p.Done(context.DeadlineExceeded)
					} else {
						p.Done(nil)
					}
				}
			})
		}
		workers.Wait()
		close(stop)
		watcher.Wait()
		s := l.Snapshot()
		require.GreaterOrEqual(t, s.Windows, uint64(windows), "windows closed")
		require.Positive(t, s.LimitChanges, "the limit moved")
		require.Positive(t, checks.Load(), "snapshots checked")
		changes.check(t, s)
		require.Zero(t, s.InFlight)
	})
}

// limitChanges is an OnLimitChange that checks the changes it is told of: one at a time,
// each from the limit the last one left.
type limitChanges struct {
	limit    int // the limit the last change left; set it to the initial limit
	n        uint64
	inside   atomic.Int32
	mu       sync.Mutex
	failures []string
}

func (c *limitChanges) add(_ string, d Decision) {
	if c.inside.Add(1) != 1 {
		c.fail("a change of the limit reported while another is")
	}
	defer c.inside.Add(-1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if d.LimitBefore != c.limit {
		c.failures = append(c.failures, fmt.Sprintf("change %d moves the limit from %d, the last one left %d",
			c.n+1, d.LimitBefore, c.limit))
	}
	c.limit = d.LimitAfter
	c.n++
}

func (c *limitChanges) fail(msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failures = append(c.failures, msg)
}

// check reports what add found, and a failure unless the changes reported are the
// snapshot's, which nothing runs beside, and the limit is the last change's.
func (c *limitChanges) check(r reporter, s Snapshot) {
	r.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.failures {
		r.Errorf("%s", f)
	}
	if c.n != s.LimitChanges || c.limit != s.Limit {
		r.Errorf("%d changes seen, leaving the limit at %d; the snapshot says %d, and %d",
			c.n, c.limit, s.LimitChanges, s.Limit)
	}
}

// limitChanges catches a lost change, a change reported beside another, and a count of
// changes that is not the snapshot's.
func TestLimitChangesCatches(t *testing.T) {
	change := func(before, after int) Decision { return Decision{LimitBefore: before, LimitAfter: after} }
	for _, tc := range []struct {
		name string
		feed func(c *limitChanges)
		snap Snapshot
		bad  bool
	}{
		{"in order", func(c *limitChanges) { c.add("", change(4, 6)); c.add("", change(6, 3)) }, Snapshot{Limit: 3, LimitChanges: 2}, false},
		{"a change lost", func(c *limitChanges) { c.add("", change(4, 6)); c.add("", change(7, 3)) }, Snapshot{Limit: 3, LimitChanges: 3}, true},
		{"two at once", func(c *limitChanges) {
			c.inside.Add(1) // as if a change were being reported
			c.add("", change(4, 6))
			c.inside.Add(-1)
		}, Snapshot{Limit: 6, LimitChanges: 1}, true},
		{"a count not the snapshot's", func(c *limitChanges) { c.add("", change(4, 6)) }, Snapshot{Limit: 6, LimitChanges: 2}, true},
		{"a limit not the snapshot's", func(c *limitChanges) { c.add("", change(4, 6)) }, Snapshot{Limit: 5, LimitChanges: 1}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &limitChanges{limit: 4}
			tc.feed(c)
			var rec recorder
			c.check(&rec, tc.snap)
			require.Equal(t, tc.bad, len(rec.failures) > 0, "%v", rec.failures)
		})
	}
}
