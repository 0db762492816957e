package adaptivelimit

import (
	"context"
	"errors"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Regression tests for the bugs that adversarial use found (issue #11), one or more each.

// 1. An estimate of 2^63 became math.MinInt64 through int(), and the limiter rejected every
// call for good. Every conversion saturates, even past what Config accepts.
func TestSaturate(t *testing.T) {
	require.Equal(t, math.MaxInt, saturate(math.Exp2(63), 1, math.MaxInt))
	require.Equal(t, 7, saturate(math.Inf(1), 1, 7))
	require.Equal(t, 1, saturate(math.Inf(-1), 1, 7))
	require.Equal(t, 1, saturate(math.NaN(), 1, 7))
	require.Equal(t, 3, saturate(3.99, 1, 7))
	require.Equal(t, time.Duration(math.MaxInt64), duration(math.Exp2(64)))
	require.Equal(t, time.Duration(0), duration(-1))
}

func TestAlgorithmsSaturate(t *testing.T) {
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		// Beyond the ceilings, as the algorithms would see them if Config let them through.
		c, err := Config{Algorithm: alg}.resolved()
		require.NoError(t, err)
		c.InitialLimit, c.MaxLimit, c.QueueSize = math.MaxInt, math.MaxInt, math.MaxInt
		a := newAlgorithm(c)
		for i := range 20 {
			w := window{samples: 10, meanLatency: 1e6, maxInFlight: math.MaxInt}
			if i%3 == 2 {
				w.drops = 1
			}
			d := a.next(w, Decision{})
			require.GreaterOrEqual(t, d.LimitAfter, c.MinLimit, "window %d", i)
		}
	})
}

// QueueSize: math.MaxInt moved the limit from 4 to 1.8e18 in one window; now the largest
// values Config accepts keep the limit within its bounds.
func TestCeilingsKeepTheLimitInBounds(t *testing.T) {
	l, clock := newManual(t, Config{InitialLimit: 4, MaxLimit: maxLimitValue, QueueSize: maxQueueSize, MinWindowSamples: 1})
	for range 5 {
		p, err := l.Acquire()
		require.NoError(t, err)
		clock.Advance(time.Second)
		p.Done(nil)
		require.LessOrEqual(t, l.Limit(), maxLimitValue)
		require.GreaterOrEqual(t, l.Limit(), 1)
	}
}

// 3. Stripes are sized at New; after GOMAXPROCS grows, a P beyond them takes the atomic
// overflow stripe, so two Ps never add to one stripe with plain adds.
func TestGOMAXPROCSGrowth(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	l, err := New(Config{Window: time.Millisecond, MinWindowSamples: 1, MaxLimit: 1000, InitialLimit: 64})
	require.NoError(t, err)
	perP := len(l.stripes.s)
	require.Equal(t, 2, perP)
	runtime.GOMAXPROCS(64)

	var beyond, calls atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var snapshots sync.WaitGroup
	snapshots.Go(func() {
		poll(stop, func() bool {
			last := l.Snapshot().Last
			if last.Samples < 0 || last.Drops > 0 || last.MeanLatency >= time.Minute {
				t.Errorf("invented samples: %+v", last)
				return false
			}
			return true
		})
	})
	for range 64 {
		wg.Go(func() {
			for range 500 {
				// Which stripe this P gets: its own below perP, the overflow one above.
				p := procPin()
				s, own := l.stripes.pin()
				procUnpin()
				procUnpin()
				if p >= perP {
					beyond.Add(1)
				}
				if p < perP && (!own || s != &l.stripes.s[p]) || p >= perP && (own || s != &l.overflow) {
					t.Errorf("P %d of %d with stripes got stripe %p, own %v", p, perP, s, own)
				}
				permit, err := l.Acquire()
				if err == nil {
					calls.Add(1)
					permit.Done(nil)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	snapshots.Wait()
	require.Positive(t, beyond.Load(), "some goroutines ran on the Ps added after New")
	require.Equal(t, uint64(calls.Load()), l.stripes.sum(0).samples, "no sample lost or invented")
	require.Zero(t, l.InFlight())
}

// A counter that went backwards (a torn plain add on a shared stripe) is no sample: the
// closer's difference is 0, not 2^64 minus a little.
func TestCounterBackwardsIsLostNotInvented(t *testing.T) {
	require.Zero(t, since(5, 10))
	require.Equal(t, uint64(5), since(3, math.MaxUint64-1), "a counter that wrapped grew")
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		l, clock := newManual(t, Config{Algorithm: alg, MinWindowSamples: 1})
		for range 20 {
			acquireN(t, l, 1)[0].Done(nil)
		}
		clock.Advance(time.Second)
		acquireN(t, l, 1)[0].Done(nil)
		require.Equal(t, 21, l.Snapshot().Last.Samples)
		s := &l.stripes.s[0]
		s.samples -= 1000
		s.drops -= 1000
		s.latencyLow -= 1000
		clock.Advance(time.Second)
		acquireN(t, l, 1)[0].Done(nil) // too few samples: extended
		require.Equal(t, uint64(1), l.Snapshot().Windows)
		limit := l.Limit()
		s.samples += 2000 // back ahead
		clock.Advance(time.Second)
		acquireN(t, l, 1)[0].Done(nil)
		last := l.Snapshot().Last
		require.LessOrEqual(t, last.Samples, 1002)
		require.Equal(t, 0, last.Drops, "drops that went backwards are none")
		require.Zero(t, last.Drops)
		require.GreaterOrEqual(t, l.Limit(), limit, "no invented drop backs off")
	})
}

// 4. Snapshot().Rejected never goes backwards, even when the counters' sum does.
func TestRejectedIsMonotonic(t *testing.T) {
	l, _ := newManual(t, Config{InitialLimit: 1, MaxLimit: 1})
	acquireN(t, l, 1)
	for range 10 {
		_, err := l.Acquire()
		require.Error(t, err)
	}
	require.Equal(t, uint64(10), l.Snapshot().Rejected)
	for i := range l.stripes.s {
		l.stripes.s[i].rejected = 0 // a counter that went backwards
	}
	require.Equal(t, uint64(10), l.Snapshot().Rejected, "no reset seen")
	_, _ = l.Acquire()
	require.Equal(t, uint64(10), l.Snapshot().Rejected, "held until the counters pass it")
}

// 5. A DropOn or Clock that panics frees the slot, and the panic goes on.
func TestPanickingCallbacksFreeTheSlot(t *testing.T) {
	t.Run("DropOn", func(t *testing.T) {
		forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
			l, _ := newManual(t, Config{Algorithm: alg, InitialLimit: 3, MaxLimit: 3,
				DropOn: func(error) bool { panic("x") }})
			for p := range each(acquireN(t, l, 3)) {
				require.PanicsWithValue(t, "x", func() { p.Done(errors.New("e")) })
			}
			require.Zero(t, l.InFlight())
			require.PanicsWithValue(t, "x", func() {
				_, _ = Do(context.Background(), l, func(context.Context) (int, error) { return 0, errors.New("e") })
			}, "the user's panic, not a finished-twice one")
			require.Zero(t, l.InFlight())
			acquireN(t, l, 3)
		})
	})
	t.Run("Clock", func(t *testing.T) {
		forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
			l, clock := newStep(t, Config{Algorithm: alg, InitialLimit: 3, MaxLimit: 3}, 0)
			held := acquireN(t, l, 3)
			clock.armed.Store(true)
			for i := range held {
				require.PanicsWithValue(t, "clock broke", func() { held[i].Done(nil) }, "in Done")
			}
			require.Zero(t, l.InFlight())
			if alg != AIMD { // AIMD reads no clock in Acquire
				for range 3 {
					require.PanicsWithValue(t, "clock broke", func() { _, _ = l.Acquire() }, "in Acquire")
				}
				require.Zero(t, l.InFlight())
			}
			clock.armed.Store(false)
			acquireN(t, l, 3)
		})
	})
}

// 6. Clock arithmetic saturates and never wraps.
func TestClockArithmetic(t *testing.T) {
	t.Run("latency sum across a year", func(t *testing.T) {
		l, clock := newManual(t, Config{InitialLimit: 1000, MaxLimit: 1000, MinWindowSamples: 1001})
		held := acquireN(t, l, 1000)
		const year = 365 * 24 * time.Hour
		clock.Advance(year)
		for i := range held {
			held[i].Done(nil) // the window is extended to a second later
		}
		clock.Advance(time.Second)
		acquireN(t, l, 1)[0].Done(nil) // latency 0
		require.Equal(t, uint64(1), l.Snapshot().Windows)
		require.InDelta(t, float64(year)*1000/1001, float64(l.Snapshot().WindowLatency), 1e6,
			"1000 samples of a year each sum to 2^64.8 ns")
	})
	t.Run("latency across the whole clock", func(t *testing.T) {
		l, clock := newStep(t, Config{MinWindowSamples: 1}, math.MinInt64)
		p, err := l.Acquire()
		require.NoError(t, err)
		clock.now.Store(math.MaxInt64)
		p.Done(nil)
		require.Equal(t, time.Duration(math.MaxInt64), l.Snapshot().WindowLatency, "saturated")
	})
	t.Run("window end near the clock's end", func(t *testing.T) {
		l, clock := newStep(t, Config{MinWindowSamples: 1}, math.MaxInt64-int64(time.Second)/2)
		for range 5 {
			acquireN(t, l, 1)[0].Done(nil)
		}
		require.Zero(t, l.Snapshot().Windows, "windows do not close on the sample count alone")
		clock.now.Store(math.MaxInt64)
		acquireN(t, l, 1)[0].Done(nil)
		require.Equal(t, uint64(1), l.Snapshot().Windows, "the window ends at the clock's end")
	})
	t.Run("ManualClock.Advance past the end", func(t *testing.T) {
		c := NewManualClock()
		c.Set(math.MaxInt64 - 5)
		require.PanicsWithValue(t, "adaptivelimit: ManualClock.Advance past the clock's end (math.MaxInt64 nanoseconds)",
			func() { c.Advance(6) })
		require.Equal(t, int64(math.MaxInt64-5), c.Nanotime(), "unmoved")
		c.Advance(5)
		require.Equal(t, int64(math.MaxInt64), c.Nanotime())
	})
	t.Run("a clock that steps back by hours", func(t *testing.T) {
		forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
			l, clock := newStep(t, Config{Algorithm: alg, MinWindowSamples: 2}, int64(10*time.Hour))
			p := &acquireN(t, l, 1)[0]
			clock.now.Store(int64(7 * time.Hour))
			p.Done(nil) // ended before it started: latency 0; the window moves to [7h, 7h+1s)
			acquireN(t, l, 1)[0].Done(nil)
			require.Zero(t, l.Snapshot().Windows)
			clock.now.Add(int64(time.Second))
			acquireN(t, l, 1)[0].Done(nil)
			s := l.Snapshot()
			require.Equal(t, uint64(1), s.Windows, "not stalled until 10h")
			require.Equal(t, 3, s.Last.Samples, "the window kept its samples")
			require.GreaterOrEqual(t, s.Last.MeanLatency, time.Duration(0))
		})
	})
	t.Run("a reading taken long ago moves no window back", func(t *testing.T) {
		l, clock := newStep(t, Config{MinWindowSamples: 1}, int64(time.Hour))
		clock.now.Add(int64(10 * time.Second))
		acquireN(t, l, 1)[0].Done(nil)
		end := l.window.end.Load()
		l.closeWindow(int64(time.Hour)) // a goroutine that read the clock 10 s ago
		require.Equal(t, end, l.window.end.Load())
	})
}

// 7. A nil or zero Limiter gets one clear panic, before anything is pinned: with -tags purego
// the zero Limiter used to kill the process ("panic holding locks").
func TestUnusableLimiter(t *testing.T) {
	const msg = "adaptivelimit: nil or zero *Limiter: create limiters with New"
	for name, l := range map[string]*Limiter{"nil": nil, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			require.PanicsWithValue(t, msg, func() { _, _ = l.Acquire() })
			require.PanicsWithValue(t, msg, func() { _, _ = l.AcquireContext(context.Background()) })
			require.PanicsWithValue(t, msg, func() { _, _ = l.AcquireClass("critical") })
			require.PanicsWithValue(t, msg, func() { _ = l.Snapshot() })
			require.PanicsWithValue(t, msg, func() { _ = l.Limit() })
			require.PanicsWithValue(t, msg, func() { _ = l.InFlight() })
			require.PanicsWithValue(t, msg, func() {
				_, _ = Do(context.Background(), l, func(context.Context) (int, error) { return 0, nil })
			})
		})
	}
}

// In a dry run, a permit finished twice could hold the in-flight count at -1 for a moment, and
// an Acquire then got a permit with start 0, whose latency was the clock's absolute value.
func TestDryRunPermitIsAlwaysTimed(t *testing.T) {
	l, clock := newManual(t, Config{DryRun: true, MinWindowSamples: 1, Window: time.Millisecond})
	clock.Set(int64(time.Hour))
	l.slots.taken.Store(-1) // a double finish, before it puts the slot back
	p, err := l.Acquire()
	require.NoError(t, err)
	l.slots.taken.Add(1) // and after
	clock.Advance(time.Millisecond)
	p.Done(nil)
	last := l.Snapshot().Last
	require.Equal(t, time.Millisecond, last.MeanLatency)
	require.Equal(t, 1, last.MaxInFlight)
}

// Disabled permits hold nothing: finishing them in any order, any number of times, is safe.
func TestDisabledPermitsNeedNoFinishing(t *testing.T) {
	l, _ := newManual(t, Config{Disabled: true})
	p, err := l.Acquire()
	require.NoError(t, err)
	require.True(t, p == Permit{})
	q := copyOf(&p)
	p.Done(nil)
	q.Cancel()
	require.Zero(t, l.InFlight())
}

// 9. Disabled and DryRun both set: Disabled wins, whatever level of a configuration set
// DryRun, so that the kill switch always works.
func TestDisabledWinsOverDryRun(t *testing.T) {
	l, _ := newManual(t, Config{InitialLimit: 1, MaxLimit: 1, Disabled: true, DryRun: true})
	held := acquireN(t, l, 3)
	s := l.Snapshot()
	require.True(t, s.Disabled)
	require.False(t, s.DryRun)
	require.Zero(t, s.Rejected, "nothing measured, not even would-be rejections")
	require.Zero(t, s.InFlight)
	for i := range held {
		held[i].Done(nil)
	}
}
