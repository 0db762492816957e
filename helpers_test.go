package adaptivelimit

// The helpers that the tests of several files share: building limiters, taking and finishing
// permits, test clocks, the checks of the invariant suite, and the table of modes that the
// invariant, stress and leak tests run over. What reaches inside a Limiter is in the last
// section, so that a change of its internals is met in one place.

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testMode is one way a Limiter admits calls. The invariant, stress and leak tests run in
// every mode of testModes (forEachMode), as one suite runs over every implementation: what
// they check holds in each.
type testMode struct {
	name     string
	procs    int     // GOMAXPROCS while New runs: 1 leaves leases off, 2 or more turns them on, 0 leaves it as the test runs
	classes  []Class // the classes of the calls: none, one or several
	dryRun   bool
	disabled bool
}

// testModes are the modes the suite runs in: enforcing with one shared count (one P at New),
// with per-P leases (two Ps or more at New), with one class and with several (with leases
// where the test runs on more than one P), and a dry run. disabledMode joins them where a
// test holds for a limiter that measures nothing.
var testModes = []testMode{
	{name: "enforcing", procs: 1},
	{name: "leasing", procs: 2},
	{name: "one class", classes: []Class{{"only", 0}}},
	{name: "classes", classes: threeClasses},
	{name: "dry run", dryRun: true},
}

var disabledMode = testMode{name: "disabled", disabled: true}

// forEachMode runs test in each of modes.
func forEachMode(t *testing.T, modes []testMode, test func(t *testing.T, m testMode)) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) { test(t, m) })
	}
}

// enforcedModes are the modes of testModes that reject a call above the limit.
var enforcedModes = slices.DeleteFunc(slices.Clone(testModes), func(m testMode) bool { return !m.enforced() })

// enforced reports whether m's limiters reject a call above the limit.
func (m testMode) enforced() bool { return !m.dryRun && !m.disabled }

// new returns a limiter for c in m: with m's classes and switches, made at m's GOMAXPROCS.
func (m testMode) new(t testing.TB, c Config) *Limiter {
	t.Helper()
	c.Classes, c.DryRun, c.Disabled = m.classes, m.dryRun, m.disabled
	if atNew := m.procs; atNew > 0 {
		if atNew > 1 {
			atNew = max(atNew, runtime.GOMAXPROCS(0)) // leases on: as many Ps as the test runs on
		}
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(atNew))
	}
	l, err := New(c)
	require.NoError(t, err)
	return l
}

// newManual is new on a ManualClock.
func (m testMode) newManual(t testing.TB, c Config) (*Limiter, *ManualClock) {
	t.Helper()
	clock := NewManualClock()
	c.Clock = clock
	return m.new(t, c), clock
}

// class returns the name of one of m's classes drawn by r, or the highest where r is nil:
// "" without classes.
func (m testMode) class(r *rand.Rand) string {
	switch {
	case m.classes == nil:
		return ""
	case r == nil:
		return m.classes[0].Name
	}
	return m.classes[r.IntN(len(m.classes))].Name
}

// acquire takes a slot of l for a call of class, as a caller in m does: with Acquire where m
// has no classes, else with AcquireClass.
func (m testMode) acquire(l *Limiter, class string) (Permit, error) {
	if m.classes == nil {
		return l.Acquire()
	}
	return l.AcquireClass(class)
}

// context returns ctx for a call of class in m.
func (m testMode) context(ctx context.Context, class string) context.Context {
	if m.classes == nil {
		return ctx
	}
	return WithClass(ctx, class)
}

// topClass is the highest class of l, which may take every slot: "" without classes.
func topClass(l *Limiter) string {
	if c := l.Snapshot().Classes; len(c) > 0 {
		return c[0].Name
	}
	return ""
}

var algorithms = []Algorithm{Gradient2, AIMD, Vegas, LossDelay}

// forEachAlgorithm runs test once per algorithm: every behaviour below holds for each.
func forEachAlgorithm(t *testing.T, test func(t *testing.T, alg Algorithm)) {
	for _, alg := range algorithms {
		t.Run(alg.String(), func(t *testing.T) { test(t, alg) })
	}
}

// repeat returns n, how many times a stress test repeats its steps, or a fifth of it (at least
// one) under -short: make test's passes under qemu-user and the race detector's of purego run
// every test in every mode, with fewer repetitions, beside one full pass of each build.
func repeat(n int) int {
	if testing.Short() {
		return max(n/5, 1)
	}
	return n
}

// forEachProcs runs test with GOMAXPROCS at each of 1, 2, 4 and 8, whatever -cpu says.
func forEachProcs(t *testing.T, test func(t *testing.T, procs int)) {
	for _, procs := range []int{1, 2, 4, 8} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			test(t, procs)
		})
	}
}

func newManual(t *testing.T, c Config) (*Limiter, *ManualClock) {
	t.Helper()
	clock := NewManualClock()
	c.Clock = clock
	l, err := New(c)
	require.NoError(t, err)
	return l, clock
}

// threeClasses under a limit of 10 reserve 3 slots for critical and 4 for standard; 3 are
// shared, and sheddable reserves none.
var threeClasses = []Class{{"critical", 0.3}, {"standard", 0.4}, {"sheddable", 0}}

func newClassed(t *testing.T, limit int, classes []Class) *Limiter {
	t.Helper()
	l, err := New(Config{Classes: classes, InitialLimit: limit, MinLimit: limit, MaxLimit: limit, Clock: NewManualClock()})
	require.NoError(t, err)
	return l
}

// manualWindow is the window of fixedOnManual's limiters.
const manualWindow = time.Second

// fixedOnManual is a limiter in m of a fixed limit on a ManualClock whose window does not end
// unless the test moves the clock.
func fixedOnManual(t *testing.T, m testMode, limit int) (*Limiter, *ManualClock) {
	return m.newManual(t, Config{InitialLimit: limit, MinLimit: limit, MaxLimit: limit, MinWindowSamples: 1, Window: manualWindow})
}

func acquireN(t *testing.T, l *Limiter, n int) []Permit {
	t.Helper()
	permits := make([]Permit, n)
	for i := range permits {
		var err error
		permits[i], err = l.Acquire()
		require.NoError(t, err, "call %d", i)
	}
	return permits
}

func acquireClassN(t *testing.T, l *Limiter, class string, n int) []Permit {
	t.Helper()
	permits := make([]Permit, n)
	for i := range permits {
		p, err := l.AcquireClass(class)
		require.NoError(t, err, "%s call %d of %d", class, i+1, n)
		permits[i] = p.Move()
	}
	return permits
}

// takeAll acquires for class until a call is rejected, and returns the permits.
func takeAll(t *testing.T, l *Limiter, class string) []Permit {
	t.Helper()
	var permits []Permit
	for {
		p, err := l.AcquireClass(class)
		if err != nil {
			require.ErrorIs(t, err, ErrLimitExceeded)
			return permits
		}
		permits = append(permits, p.Move())
		require.LessOrEqual(t, len(permits), l.Limit(), "more permits than the limit")
	}
}

func finishAll(permits []Permit) {
	for i := range permits {
		permits[i].Done(nil)
	}
}

// each yields a pointer to each permit of ps, to finish them in place: ranging over the
// values would finish copies, which go vet reports.
func each(ps []Permit) iter.Seq[*Permit] {
	return func(yield func(*Permit) bool) {
		for i := range ps {
			if !yield(&ps[i]) {
				return
			}
		}
	}
}

// copyOf copies p as code that copies a Permit by mistake does, which go vet reports in
// q := p.
func copyOf(p *Permit) Permit { return Permit{ticket: p.ticket} }

// holdAndFinish holds p's slot for a few yields, failing the test if more than most calls
// hold one at once (holders counts them), and finishes it in one of the ways a call can end.
func holdAndFinish(t *testing.T, r *rand.Rand, p *Permit, holders *atomic.Int64, most int) {
	if h := holders.Add(1); h > int64(most) {
		t.Errorf("%d calls hold a slot, at most %d may", h, most)
	}
	for range r.IntN(3) {
		runtime.Gosched()
	}
	holders.Add(-1) // before the slot is freed, which lets another in
	switch r.IntN(4) {
	case 0:
		p.Cancel()
	case 1:
		p.Done(context.DeadlineExceeded)
	default:
		p.Done(nil)
	}
}

// requireExactly takes limit permits, one after the other on one goroutine, checks that the
// next call is rejected, and frees them: the slots parked in the Ps' caches are not lost.
func requireExactly(t *testing.T, l *Limiter, limit int) {
	t.Helper()
	top := topClass(l)
	held := acquireClassN(t, l, top, limit)
	require.Equal(t, limit, l.InFlight())
	_, err := l.AcquireClass(top)
	require.ErrorIs(t, err, ErrLimitExceeded, "every slot is held")
	require.LessOrEqual(t, slotsTaken(l), int64(limit))
	for i := range held {
		held[i].Done(nil)
	}
	require.Zero(t, l.InFlight())
}

// countingClock counts its reads, to show what reads the clock and what does not.
type countingClock struct {
	ManualClock
	reads atomic.Int64
}

func (c *countingClock) Nanotime() int64 {
	c.reads.Add(1)
	return c.ManualClock.Nanotime()
}

type panickyClock struct{ panics bool }

func (c *panickyClock) Nanotime() int64 {
	if c.panics {
		panic("clock")
	}
	return 1
}

// stepClock is a Clock that a test sets anywhere, backwards included, as the Clock contract
// forbids; and that panics while armed.
type stepClock struct {
	now   atomic.Int64
	armed atomic.Bool
}

func (c *stepClock) Nanotime() int64 {
	if c.armed.Load() {
		panic("clock broke")
	}
	return c.now.Load()
}

func newStep(t *testing.T, c Config, at int64) (*Limiter, *stepClock) {
	t.Helper()
	clock := &stepClock{}
	clock.now.Store(at)
	c.Clock = clock
	l, err := New(c)
	require.NoError(t, err)
	return l, clock
}

// finisher is what an admitted call holds: a *Permit, or a broken one.
type finisher interface {
	Done(err error)
	Cancel()
}

type subject interface {
	acquire(r *rand.Rand) (finisher, bool) // a call of the highest class that does not wait where r is nil
	InFlight() int
	enforced() bool
}

// reporter is the part of testing.TB the checks use, so that a recorder can stand for the
// test. A check reports on the goroutine that called it.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

// recorder stands for the test in TestInvariantChecksCatchBrokenLimiters: it keeps the
// failures a check reports.
type recorder struct{ failures []string }

func (*recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

// limiterSubject is a Limiter under test, made in mode, whose calls are of the mode's classes
// at random; with waits, one call in four waits up to 50 µs for a slot.
type limiterSubject struct {
	*Limiter
	mode  testMode
	waits bool
}

func (s limiterSubject) acquire(r *rand.Rand) (finisher, bool) {
	var p Permit
	var err error
	class := s.mode.class(r)
	if s.waits && r != nil && r.IntN(4) == 0 {
		ctx, cancel := context.WithTimeout(s.mode.context(context.Background(), class), time.Duration(r.IntN(50))*time.Microsecond)
		p, err = s.AcquireContext(ctx)
		cancel()
	} else {
		p, err = s.mode.acquire(s.Limiter, class)
	}
	return &p, err == nil
}

func (s limiterSubject) enforced() bool { return s.mode.enforced() }

// observed is what the callers of holders saw.
type observed struct {
	admitted, rejected int64
	most               int64 // the most calls that held a slot at once
	samples, drops     int64 // the calls that ended with a sample, and of them with a drop
}

var errNotFound = errors.New("404")

// fillPatience is how long the callers of holders go on past their calls while fewer than
// fill calls ever held a slot at once. A caller that took a slot may lose its thread to the
// machine before it counts itself inside; meanwhile the others, rejected, run out of calls.
const fillPatience = 300 * time.Millisecond

// holders runs goroutines that make calls through s, each holding its slot while it yields
// a few times, and then while fewer than fill calls hold one (for at most 1000 more yields),
// so that holders overlap on any number of Ps; and ending it in one of the ways a call ends.
// Each makes calls calls, and more while fill calls never held a slot at once, for at most
// fillPatience.
func holders(s subject, goroutines, calls, fill int) observed {
	var inside, most, admitted, rejected, samples, drops atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	unfilled := func() bool {
		return most.Load() < int64(fill) && time.Since(start) < fillPatience
	}
	for g := range goroutines {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 19))
			for i := 0; i < calls || unfilled(); i++ {
				p, ok := s.acquire(r)
				if !ok {
					rejected.Add(1)
					continue
				}
				admitted.Add(1)
				n := inside.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				for range 1 + r.IntN(3) {
					runtime.Gosched()
				}
				// 1000: under the race detector on a loaded 2-core machine, 100 yields once
				// let 12 goroutines on 8 Ps miss a limit of 5 in all of their 400 calls each.
				for range 1000 {
					if inside.Load() >= int64(fill) {
						break
					}
					runtime.Gosched()
				}
				inside.Add(-1) // before the slot is freed, which lets another in
				switch r.IntN(4) {
				case 0:
					samples.Add(1)
					p.Done(nil)
				case 1:
					samples.Add(1)
					drops.Add(1)
					p.Done(context.DeadlineExceeded)
				case 2:
					p.Done(errNotFound)
				default:
					p.Cancel()
				}
			}
		})
	}
	wg.Wait()
	return observed{admitted: admitted.Load(), rejected: rejected.Load(), most: most.Load(),
		samples: samples.Load(), drops: drops.Load()}
}

// leaseStress runs holders of s on goroutines, each making calls calls, some of them waiting
// for a slot, and fails the test if more calls held a slot at once than most, a count of the
// limiter is above the truth, or a waiter is left.
func leaseStress(t *testing.T, s limiterSubject, goroutines, calls, most int) observed {
	t.Helper()
	o := holders(s, goroutines, calls, 0)
	checkAtMost(t, o, most)
	snap := s.Snapshot()
	// Each goroutine holds at most one slot at a time.
	require.LessOrEqual(t, snap.Last.MaxInFlight, goroutines, "the most in flight is never above the truth")
	require.LessOrEqual(t, snap.Rejected, uint64(o.rejected), "never invented")
	require.Zero(t, snap.Waiting)
	return o
}

// requireNoGoroutineLeft fails the test if more goroutines run than before, once those
// that are ending (the timers of contexts running their cancel funcs among them) have had a
// second to.
func requireNoGoroutineLeft(t *testing.T, before int) {
	t.Helper()
	for until := time.Now().Add(time.Second); runtime.NumGoroutine() > before && time.Now().Before(until); {
		runtime.Gosched()
	}
	if runtime.NumGoroutine() > before {
		buf := make([]byte, 1<<20)
		t.Fatalf("goroutines left running:\n%s", buf[:runtime.Stack(buf, true)])
	}
}

// checkMost reports a failure if more than limit calls held a slot at once, or if the
// calls never filled the limit though they could; in a dry run, if a call was rejected.
func checkMost(r reporter, s subject, o observed, limit int) {
	r.Helper()
	if !s.enforced() {
		if o.rejected != 0 {
			r.Errorf("a dry run rejected %d calls", o.rejected)
		}
		return
	}
	if checkAtMost(r, o, limit) && o.most < int64(limit) {
		r.Errorf("at most %d calls held a slot at once: the limit of %d was never filled", o.most, limit)
	}
}

// checkAtMost reports a failure if more than most calls held a slot at once.
func checkAtMost(r reporter, o observed, most int) bool {
	r.Helper()
	if o.most > int64(most) {
		r.Errorf("%d calls held a slot at once, at most %d may", o.most, most)
		return false
	}
	return true
}

// checkSettled reports a failure unless s, which nothing else uses, holds no slot and
// admits exactly limit calls of its highest class at once: more in a dry run.
func checkSettled(r reporter, s subject, limit int) {
	r.Helper()
	if n := s.InFlight(); n != 0 {
		r.Errorf("%d calls hold a slot after every call ended", n)
		return
	}
	var held []finisher
	for {
		p, ok := s.acquire(nil)
		if !ok {
			break
		}
		held = append(held, p)
		if len(held) > limit {
			break
		}
	}
	for _, p := range held {
		p.Cancel()
	}
	switch {
	case !s.enforced() && len(held) <= limit:
		r.Errorf("%d calls admitted at once in a dry run after the calls ended: it admits more than the limit of %d", len(held), limit)
	case s.enforced() && len(held) != limit:
		r.Errorf("%d calls admitted at once after the calls ended, want the limit of %d", len(held), limit)
	}
}

// checkCounted closes the window of a fixedOnManual limiter whose clock did not move while
// the calls ran, with one more sample, and reports a failure unless that window counted every
// sample and drop once: none lost, none invented.
func checkCounted(r reporter, l *Limiter, clock *ManualClock, o observed) {
	r.Helper()
	clock.Advance(manualWindow)
	p, err := l.AcquireClass(topClass(l))
	if err != nil {
		r.Errorf("the call that closes the window: %v", err)
		return
	}
	p.Done(nil)
	if d := l.Snapshot().Last; int64(d.Samples) != o.samples+1 || int64(d.Drops) != o.drops {
		r.Errorf("the window counted %d samples and %d drops; the calls made %d and %d",
			d.Samples, d.Drops, o.samples+1, o.drops)
	}
}

// watch reads snapshots until stop: the limit within its bounds, counters that never go
// backwards, and windows that make sense. It counts the snapshots it checked in checks.
func watch(r reporter, l *Limiter, stop <-chan struct{}, checks *atomic.Int64) {
	c := configOf(l)
	var prev Snapshot
	poll(stop, func() bool {
		s := l.Snapshot()
		ok := s.Limit >= c.MinLimit && s.Limit <= c.MaxLimit &&
			s.Rejected >= prev.Rejected && s.Windows >= prev.Windows && s.LimitChanges >= prev.LimitChanges &&
			s.LimitChanges <= s.Windows &&
			// A LossDelay probe's window ends at its bound with what samples it has (lossdelay.go).
			(s.Windows == 0 || (s.Last.Samples >= c.MinWindowSamples || s.Last.Cause == CauseProbe) && s.Last.Drops <= s.Last.Samples &&
				s.Last.MeanLatency < time.Minute &&
				s.Last.LimitAfter >= c.MinLimit && s.Last.LimitAfter <= c.MaxLimit)
		if !ok {
			r.Errorf("snapshot breaks an invariant: %+v after %+v", s, prev)
			return false
		}
		checks.Add(1)
		prev = s
		runtime.Gosched()
		return true
	})
}

// poll calls f until stop is closed or f returns false.
func poll(stop <-chan struct{}, f func() bool) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		if !f() {
			return
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, time.Millisecond)
}

// scripted is an algorithm whose limit is whatever next says, once a window.
type scripted struct{ limit func() int }

func (s scripted) next(_ window, d Decision) Decision {
	d.LimitAfter = s.limit()
	return d
}

func (scripted) longLatency() time.Duration { return 0 }

// cached is the idle slots in every P's cache.
func (l *Limiter) cached() int64 {
	var n int64
	for i := range l.stripes.all() {
		n += atomic.LoadInt64(&l.stripes.at(i).cache)
	}
	return n
}

// requireSettled checks the counts of a limiter that nothing runs beside, after admitted
// calls: no call holds a slot, the shared count holds exactly the cached slots, every call
// counted under leases freed its slot, and the stripe that Ps beyond the stripes share caches
// none.
func requireSettled(t *testing.T, l *Limiter, admitted int64) {
	t.Helper()
	requireIdle(t, l)
	if !l.leases || l.classes != nil {
		return
	}
	require.Zero(t, l.stripes.held())
	var acquired, released uint64
	for i := range l.stripes.all() {
		acquired += l.stripes.at(i).acquired
		released += l.stripes.at(i).released
	}
	// A slot taken for a waiter that gave up at that moment is counted, and freed.
	require.LessOrEqual(t, acquired, uint64(admitted)+l.Snapshot().WaitAbandoned, "no call counted twice")
	require.Equal(t, acquired, released)
	require.Zero(t, atomic.LoadInt64(&l.overflow.cache), "the overflow stripe caches nothing")
	require.Zero(t, l.slots.lease.Load()&^(leaseOn|cachedFlag), "nobody empties the caches")
}

// park makes goroutines on every P take and free slots of l with leases on, parking slots
// in the Ps' caches.
func park(l *Limiter, procs int) {
	if l.leases {
		l.slots.lease.Or(leaseOn) // as a take that another P's made fail does
	}
	top := topClass(l)
	var wg sync.WaitGroup
	for range 4 * procs {
		wg.Go(func() {
			for range 100 {
				if p, err := l.AcquireClass(top); err == nil {
					runtime.Gosched()
					p.Done(nil)
				}
			}
		})
	}
	wg.Wait()
}

// parkEverywhere puts slots of l straight in every P's cache, as finished calls on every P
// would, so that whichever P a goroutine runs on, other Ps hold idle slots.
func parkEverywhere(l *Limiter) {
	if !l.leases {
		return
	}
	for i := range l.stripes.s {
		for k := l.slots.cacheCap.Load(); k > 0 && l.slots.taken.Load() < l.slots.limit.Load(); k-- {
			l.slots.taken.Add(1)
			atomic.AddInt64(&l.stripes.s[i].cache, 1)
		}
	}
	l.slots.lease.Or(leaseOn)
	l.slots.markCached()
}

// requireIdle checks a limiter that no call holds a slot of: no class counts a call in
// flight, and the limiter's count holds no slot but those idle in the Ps' caches.
func requireIdle(t *testing.T, l *Limiter) {
	t.Helper()
	for _, c := range l.Snapshot().Classes {
		require.Zero(t, c.InFlight, "class %s in flight", c.Name)
	}
	require.Equal(t, l.cached(), slotsTaken(l), "slots taken beside those idle in caches")
	require.Zero(t, l.InFlight())
}

// configOf is the configuration l runs with, its defaults filled in.
func configOf(l *Limiter) Config { return l.cfg }

// slotsTaken is the limiter's count of the slots taken: held, or idle in a P's cache.
func slotsTaken(l *Limiter) int64 { return l.slots.taken.Load() }

// leased reports whether l's calls may keep slots in per-P caches.
func leased(l *Limiter) bool { return l.leases }

// setAlgorithm makes a the algorithm of l, which no call uses yet.
func setAlgorithm(l *Limiter, a algorithm) { l.algorithm = a }

// mostSlots is the most slots l lets calls hold under a limit of estimate: with classes, the
// never-lent parts of the reserves on top, up to MaxLimit.
func mostSlots(l *Limiter, estimate int) int {
	if l.classes == nil {
		return estimate
	}
	return int(l.classes.limitAt(int64(estimate), int64(l.cfg.MaxLimit)))
}

// windowTotals are the samples and drops of the window now open.
func windowTotals(l *Limiter) (samples, drops uint64) {
	s := l.stripes.sum(0)
	return s.samples, s.drops
}

// heldBy is the count of the calls in flight that p's call took its slot at: at least 1.
func heldBy(p *Permit) int64 { return p.inFlight }

// classHolds returns what each class may not take of the limit now.
func classHolds(l *Limiter) []int64 {
	var h []int64
	for c := range l.classes.names {
		h = append(h, l.classes.ceilings.hold(c))
	}
	return h
}

func classInFlight(l *Limiter) []int {
	var n []int
	for _, c := range l.Snapshot().Classes {
		n = append(n, c.InFlight)
	}
	return n
}

func classReserved(l *Limiter) []int {
	var n []int
	for _, c := range l.Snapshot().Classes {
		n = append(n, c.Reserved)
	}
	return n
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
