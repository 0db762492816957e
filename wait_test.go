package adaptivelimit

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// acquired is what a waiting caller got.
type acquired struct {
	id  int
	p   Permit
	err error
}

// startWaiter calls AcquireContext on a goroutine, which sends what it got to out, and
// returns once that goroutine waits or has sent. It runs in a synctest bubble, with a ctx
// that the test cancels before it returns, so that a failed test leaves nobody waiting.
func startWaiter(l *Limiter, ctx context.Context, id int, out chan<- *acquired) {
	go func() {
		p, err := l.AcquireContext(ctx)
		out <- &acquired{id, p.Move(), err}
	}()
	synctest.Wait()
}

// waitConfig is a limit of 1 whose callers wait a minute for a slot.
func waitConfig(alg Algorithm) Config {
	return Config{Algorithm: alg, InitialLimit: 1, MaxLimit: 1, MaxWait: time.Minute, MaxWaiters: 3}
}

func TestWaitOrder(t *testing.T) {
	for order, want := range map[WaitOrder][]int{FIFO: {0, 1, 2}, LIFO: {2, 1, 0}} {
		t.Run(order.String(), func(t *testing.T) {
			forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
				synctest.Test(t, func(t *testing.T) {
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel() // a failed test leaves nobody waiting
					c := waitConfig(alg)
					c.WaitOrder = order
					l, _ := newManual(t, c)
					held := &acquireN(t, l, 1)[0]
					out := make(chan *acquired, 3)
					for i := range 3 {
						startWaiter(l, ctx, i, out)
					}
					require.Equal(t, 3, l.Snapshot().Waiting)
					require.Empty(t, out)

					var got []int
					for range 3 {
						held.Done(nil)
						require.Equal(t, 1, l.InFlight(), "the slot went to a waiter")
						_, err := l.Acquire()
						require.ErrorIs(t, err, ErrLimitExceeded, "not to a new caller")
						synctest.Wait()
						r := <-out
						require.NoError(t, r.err)
						got = append(got, r.id)
						held = &r.p
					}
					require.Equal(t, want, got)
					held.Done(nil)
					s := l.Snapshot()
					require.Zero(t, s.InFlight)
					require.Zero(t, s.Waiting)
					require.Zero(t, s.WaitAbandoned)
					require.Equal(t, uint64(3), s.Rejected, "the new callers only")
				})
			})
		})
	}
}

// Every way of finishing a permit hands its slot on.
func TestEveryFinishHandsOff(t *testing.T) {
	finishes := map[string]func(*Permit){
		"Done(nil)":                 func(p *Permit) { p.Done(nil) },
		"Done(drop)":                func(p *Permit) { p.Done(context.DeadlineExceeded) },
		"Done(error, not a sample)": func(p *Permit) { p.Done(errors.New("404")) },
		"Cancel":                    func(p *Permit) { p.Cancel() },
	}
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		for name, finish := range finishes {
			t.Run(name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel() // a failed test leaves nobody waiting
					l, _ := newManual(t, waitConfig(alg))
					held := &acquireN(t, l, 1)[0]
					out := make(chan *acquired, 1)
					startWaiter(l, ctx, 0, out)
					finish(held)
					synctest.Wait()
					r := <-out
					require.NoError(t, r.err)
					require.Equal(t, 1, l.InFlight())
					require.Zero(t, l.Snapshot().Waiting)
					r.p.Done(nil)
					require.Zero(t, l.InFlight())
				})
			})
		}
	})
}

func TestMaxWait(t *testing.T) {
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel() // a failed test leaves nobody waiting
			c := waitConfig(alg)
			c.MaxWait = 100 * time.Millisecond
			l, _ := newManual(t, c)
			held := &acquireN(t, l, 1)[0]
			out := make(chan *acquired, 1)
			start := time.Now()
			startWaiter(l, ctx, 0, out)
			time.Sleep(99 * time.Millisecond) // synctest's fake time
			synctest.Wait()
			require.Empty(t, out, "still waiting")

			time.Sleep(time.Millisecond)
			synctest.Wait()
			r := <-out
			require.Equal(t, 100*time.Millisecond, time.Since(start))
			require.Same(t, l.rejection, r.err, "MaxWait passed: the preallocated rejection")
			require.True(t, r.p == Permit{})
			s := l.Snapshot()
			require.Equal(t, 1, s.InFlight, "the holder's slot only")
			require.Zero(t, s.Waiting)
			require.Equal(t, uint64(1), s.WaitAbandoned)
			require.Equal(t, uint64(1), s.Rejected)

			held.Done(nil)
			require.Zero(t, l.InFlight(), "nobody left to hand the slot to")
		})
	})
}

func TestContextEndsTheWait(t *testing.T) {
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		synctest.Test(t, func(t *testing.T) {
			c := waitConfig(alg)
			c.Name = "inventory"
			l, _ := newManual(t, c)
			held := &acquireN(t, l, 1)[0]
			out := make(chan *acquired, 2)

			deadline, cancelDeadline := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancelDeadline()
			startWaiter(l, deadline, 0, out)
			cancelled, cancel := context.WithCancel(context.Background())
			startWaiter(l, cancelled, 1, out)
			require.Equal(t, 2, l.Snapshot().Waiting)

			cancel()
			synctest.Wait()
			r := <-out
			require.Equal(t, 1, r.id)
			require.ErrorIs(t, r.err, ErrLimitExceeded)
			require.ErrorIs(t, r.err, context.Canceled)
			require.NotErrorIs(t, r.err, context.DeadlineExceeded)
			var rejected *LimitExceededError
			require.ErrorAs(t, r.err, &rejected)
			require.Equal(t, "inventory", rejected.InstanceID())
			require.Equal(t, `adaptivelimit: limit of "inventory" exceeded: call rejected without running: gave up waiting: context canceled`, r.err.Error())

			time.Sleep(50 * time.Millisecond)
			synctest.Wait()
			r = <-out
			require.Equal(t, 0, r.id)
			require.ErrorIs(t, r.err, ErrLimitExceeded)
			require.ErrorIs(t, r.err, context.DeadlineExceeded)

			s := l.Snapshot()
			require.Equal(t, 1, s.InFlight)
			require.Zero(t, s.Waiting)
			require.Equal(t, uint64(2), s.WaitAbandoned)
			held.Done(nil)
			require.Zero(t, l.InFlight())
		})
	})
}

// A done context gets its error and no slot, whether the limit is full or not.
func TestAcquireContextDoneContext(t *testing.T) {
	l, _ := newManual(t, waitConfig(Gradient2))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := l.AcquireContext(ctx)
	require.Same(t, context.Canceled, err)
	require.Zero(t, l.InFlight())

	acquireN(t, l, 1)
	_, err = l.AcquireContext(ctx)
	require.Same(t, context.Canceled, err)
	require.Equal(t, 1, l.InFlight())
	require.Zero(t, l.Snapshot().Rejected)
}

func TestMaxWaiters(t *testing.T) {
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		for _, tc := range []struct {
			name       string
			maxWaiters int
			want       int
		}{{"set", 3, 3}, {"default: the limit", 0, 2}} {
			t.Run(tc.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel() // a failed test leaves nobody waiting
					l, _ := newManual(t, Config{Algorithm: alg, InitialLimit: 2, MaxWait: time.Minute, MaxWaiters: tc.maxWaiters})
					held := acquireN(t, l, 2)
					out := make(chan *acquired, tc.want)
					for i := range tc.want {
						startWaiter(l, ctx, i, out)
					}
					start := time.Now()
					_, err := l.AcquireContext(context.Background())
					require.Same(t, l.rejection, err, "one waiter too many")
					require.Equal(t, start, time.Now(), "rejected at once")
					s := l.Snapshot()
					require.Equal(t, tc.want, s.Waiting)
					require.Equal(t, uint64(1), s.Rejected)
					require.Zero(t, s.WaitAbandoned, "it never waited")

					for p := range each(held) {
						p.Cancel()
					}
					// Drain: each served waiter finishes and serves the next.
					for range tc.want {
						synctest.Wait()
						r := <-out
						require.NoError(t, r.err)
						r.p.Done(nil)
					}
					require.Zero(t, l.InFlight())
					require.Zero(t, l.Snapshot().Waiting)
				})
			})
		}
	})
}

// A window that raises the limit serves as many waiters as the new slots, beside the one
// that the completing call's own slot serves.
func TestHigherLimitServesWaiters(t *testing.T) {
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel() // a failed test leaves nobody waiting
			// With every slot in use and a steady latency, each algorithm raises the limit in
			// the second window: Gradient2 by Smoothing*QueueSize (2 here), AIMD by 1, Vegas by
			// its beta (6), LossDelay by doubling up to MaxLimit (20 to 30). Vegas's first
			// window only learns its no-load latency; LossDelay probes its own at MinLimit for
			// the two windows after its first, before the test's first window.
			const waiters = 12
			c := Config{Algorithm: alg, InitialLimit: 10, MinWindowSamples: 1,
				QueueSize: 10, MaxWait: time.Minute, MaxWaiters: waiters}
			if alg == LossDelay {
				c.MaxLimit = 30
			}
			l, clock := newManual(t, c)
			if alg == LossDelay {
				for range 3 {
					p := acquireN(t, l, 1)
					clock.Advance(time.Second)
					p[0].Done(nil)
				}
				require.Equal(t, 10, l.Limit(), "the probe is over")
			}
			first := acquireN(t, l, 10)
			clock.Advance(time.Second)
			for i := len(first) - 1; i >= 0; i-- {
				first[i].Done(nil) // the first of these saw every slot in use, and ends the window
			}
			limit := l.Limit()
			held := acquireN(t, l, limit)
			out := make(chan *acquired, waiters)
			for i := range waiters {
				startWaiter(l, ctx, i, out)
			}
			clock.Advance(time.Second)
			held[limit-1].Done(nil) // ends the second window: its sample saw every slot in use
			synctest.Wait()

			d := l.Snapshot().Last
			require.Equal(t, limit, d.LimitBefore)
			require.Equal(t, limit, d.MaxInFlight, "waiters are not in flight")
			require.Greater(t, d.LimitAfter, d.LimitBefore)
			served := 1 + d.LimitAfter - d.LimitBefore // the freed slot and the new ones
			require.Less(t, served, waiters)
			require.Len(t, out, served)
			require.Equal(t, waiters-served, l.Snapshot().Waiting)
			require.Equal(t, d.LimitAfter, l.InFlight())
			var ids, want []int
			for i := range served {
				r := <-out
				require.NoError(t, r.err)
				ids, want = append(ids, r.id), append(want, i)
			}
			require.ElementsMatch(t, want, ids, "the first in line")
		})
	})
}

// A waiter's latency runs from taking its slot, not from starting to wait.
func TestWaitIsNotLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel() // a failed test leaves nobody waiting
		l, clock := newManual(t, Config{InitialLimit: 1, MaxLimit: 1, MinWindowSamples: 1, MaxWait: time.Hour})
		held := &acquireN(t, l, 1)[0]
		out := make(chan *acquired, 1)
		startWaiter(l, ctx, 0, out)
		clock.Advance(5 * time.Second)
		held.Done(nil) // a 5 s call: ends the first window, and serves the waiter
		require.Equal(t, 5*time.Second, l.Snapshot().WindowLatency)
		synctest.Wait()
		r := <-out
		require.NoError(t, r.err)
		clock.Advance(time.Second)
		r.p.Done(nil) // waited 5 s, ran 1 s
		s := l.Snapshot()
		require.Equal(t, uint64(2), s.Windows)
		require.Equal(t, time.Second, s.WindowLatency)
		require.Equal(t, 1, s.Last.MaxInFlight)
	})
}

// MaxWait 0 is the spec's fail-fast: AcquireContext and Do reject at once.
func TestFailFastByDefault(t *testing.T) {
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		synctest.Test(t, func(t *testing.T) {
			l, _ := newManual(t, Config{Algorithm: alg, InitialLimit: 1, MaxLimit: 1})
			held := &acquireN(t, l, 1)[0]
			start := time.Now()
			_, err := l.AcquireContext(context.Background())
			require.Same(t, l.rejection, err)
			_, err = Do(context.Background(), l, func(context.Context) (int, error) { panic("not called") })
			require.Same(t, l.rejection, err)
			require.Equal(t, start, time.Now())
			s := l.Snapshot()
			require.Equal(t, uint64(2), s.Rejected)
			require.Zero(t, s.Waiting)
			held.Done(nil)
		})
	})
}

// Do waits up to MaxWait where it is set.
func TestDoWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := newManual(t, waitConfig(AIMD))
		held := &acquireN(t, l, 1)[0]
		result := make(chan string, 1)
		go func() {
			v, _ := Do(context.Background(), l, func(context.Context) (string, error) { return "ran", nil })
			result <- v
		}()
		synctest.Wait()
		require.Empty(t, result)
		require.Equal(t, 1, l.Snapshot().Waiting)
		held.Done(nil)
		synctest.Wait()
		require.Equal(t, "ran", <-result)
		require.Zero(t, l.InFlight())
	})
}

// A dry run and a disabled limiter admit every call: nobody waits.
func TestUnenforcedNeverWaits(t *testing.T) {
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		for _, c := range []Config{{DryRun: true}, {Disabled: true}} {
			synctest.Test(t, func(t *testing.T) {
				c.Algorithm, c.InitialLimit, c.MaxLimit, c.MaxWait = alg, 1, 1, time.Minute
				l, _ := newManual(t, c)
				start := time.Now()
				permits := make([]Permit, 3)
				for i := range permits {
					var err error
					permits[i], err = l.AcquireContext(context.Background())
					require.NoError(t, err)
				}
				require.Equal(t, start, time.Now(), "admitted at once")
				require.Zero(t, l.Snapshot().Waiting)
				for p := range each(permits) {
					p.Done(nil)
				}
				require.Zero(t, l.InFlight())
			})
		}
	})
}

// A waiter served as it gives up passes its slot on, to the next waiter or back to the
// limit. The race is forced here: the slot is handed to waiters that have not yet looked.
func TestGiveUpWhenServed(t *testing.T) {
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		l, _ := newManual(t, waitConfig(alg))
		held := &acquireN(t, l, 1)[0]
		a, b := l.enqueue(nil), l.enqueue(nil)
		require.NotNil(t, a)
		require.NotNil(t, b)
		require.Equal(t, 2, l.Snapshot().Waiting)

		held.Cancel() // serves a
		require.True(t, a.served)
		require.False(t, b.served)
		require.Equal(t, 1, l.InFlight())

		l.giveUp(a) // a's slot goes to b
		require.True(t, b.served)
		require.Equal(t, 1, l.InFlight())
		require.Zero(t, l.Snapshot().Waiting)

		l.giveUp(b) // nobody left: back to the limit
		require.Zero(t, l.InFlight())
		require.Equal(t, uint64(2), l.Snapshot().WaitAbandoned)
		acquireN(t, l, 1)[0].Done(nil)
	})
}

// With nobody waiting, a limiter that lets callers wait costs no allocation.
func TestWaitNoAllocations(t *testing.T) {
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		l, err := New(Config{Algorithm: alg, MaxLimit: 1000, InitialLimit: 1000, MaxWait: time.Second})
		require.NoError(t, err)
		ctx := context.Background()
		require.Zero(t, testing.AllocsPerRun(1000, func() {
			p, _ := l.Acquire()
			p.Done(nil)
		}), "Acquire + Done")
		require.Zero(t, testing.AllocsPerRun(1000, func() {
			p, _ := l.AcquireContext(ctx)
			p.Done(nil)
		}), "AcquireContext + Done")
		require.Zero(t, testing.AllocsPerRun(1000, func() {
			p, _ := l.AcquireContext(ctx)
			p.Cancel()
		}), "AcquireContext + Cancel")
	})
}

// 64 goroutines mix Acquire, AcquireContext with random deadlines, Done and Cancel, in every
// mode and disabled, on a fixed limit and on a moving one with each algorithm. No more calls
// ever hold a slot than the limit allows, no waiter is forgotten while slots come free, and
// nothing is left running.
// A waiter of a lower class behind slots that the class above took back from it, with no call
// in flight to close a window, closes the window itself and is served two windows on: the
// first close bounds what is taken back to what the class above lacked, the second, with
// nobody turned away, lends it.
func TestWaiterClosesTheWindowBehindIdleSlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const window = 100 * time.Millisecond
		l, err := New(Config{Classes: []Class{{"critical", 0}, {"sheddable", 0}}, InitialLimit: 2, MinLimit: 2, MaxLimit: 2,
			Window: window, MinWindowSamples: 1, MaxWait: time.Hour, Clock: wallClock{}})
		require.NoError(t, err)
		held := acquireClassN(t, l, "critical", 2)
		for range 2 {
			_, err := l.AcquireClass("critical")
			require.ErrorIs(t, err, ErrLimitExceeded)
		}
		for i := range held {
			held[i].Done(nil)
		}
		_, err = l.AcquireClass("sheddable")
		require.ErrorIs(t, err, ErrLimitExceeded, "both idle slots are taken back from sheddable")

		start := time.Now()
		p, err := l.AcquireContext(WithClass(context.Background(), "sheddable"))
		require.NoError(t, err)
		require.Equal(t, 2*window, time.Since(start), "served as the second window closes")
		p.Done(nil)
		requireIdle(t, l)
	})
}

// A caller of a higher class that queues behind a lower class's waiter and is served at once
// was not turned away: it takes nothing back from the class below.
func TestServedAtOnceTakesNothingBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel() // a failed test leaves nobody waiting
		l, _ := newManual(t, Config{Classes: []Class{{"critical", 0.5}, {"sheddable", 0}}, InitialLimit: 2, MinLimit: 2, MaxLimit: 2, MaxWait: time.Hour})
		held := acquireClassN(t, l, "sheddable", 1)
		out := make(chan *acquired, 1)
		startWaiter(l, WithClass(ctx, "sheddable"), 0, out)
		require.Equal(t, 1, l.Snapshot().Waiting, "the slot left is critical's")

		p, err := l.AcquireContext(WithClass(ctx, "critical"))
		require.NoError(t, err)
		require.Zero(t, l.classes.ceilings.class[1].takenBack.Load(), "taken back from sheddable")
		p.Done(nil)
		held[0].Done(nil)
		r := <-out
		require.NoError(t, r.err)
		r.p.Done(nil)
		requireIdle(t, l)
	})
}

// wallClock reads time.Now: in a synctest bubble, the bubble's clock.
type wallClock struct{}

func (wallClock) Nanotime() int64 { return time.Now().UnixNano() }

func TestWaitStress(t *testing.T) {
	const goroutines, calls = 64, 150
	configs := []struct {
		name string
		c    Config
	}{
		// A fixed limit: at most 4 hold a slot at any moment. Windows of 10 ms: with classes, the
		// waiters of the lowest class wait a window or two for what is lent to them.
		{"fixed", Config{InitialLimit: 4, MinLimit: 4, MaxLimit: 4, Window: 10 * time.Millisecond}},
	}
	for _, alg := range algorithms {
		// A moving limit (drops back off, windows of 1 ms): never above MaxLimit.
		configs = append(configs, struct {
			name string
			c    Config
		}{"moving/" + alg.String(), Config{Algorithm: alg, InitialLimit: 4, MaxLimit: 8, Window: time.Millisecond, MinWindowSamples: 1}})
	}
	// With several classes, every goroutine ends up waiting patiently in the lowest class
	// behind the slots that the higher classes' calls took back from it, and with no call in
	// flight a waiter's own close lends them again (TestWaiterClosesTheWindowBehindIdleSlots).
	forEachMode(t, append(slices.Clone(testModes), disabledMode), func(t *testing.T, m testMode) {
		for _, tc := range configs {
			t.Run(tc.name, func(t *testing.T) {
				c := tc.c
				c.MaxWait, c.MaxWaiters = time.Hour, goroutines
				goroutinesBefore := runtime.NumGoroutine()
				l := m.new(t, c)
				most := c.MaxLimit
				if !m.enforced() {
					most = goroutines
				}
				var holders, served, forgotten atomic.Int64
				var wg sync.WaitGroup
				for g := range goroutines {
					wg.Go(func() {
						r := rand.New(rand.NewPCG(uint64(g), 13))
						for range repeat(calls) {
							ctx := m.context(context.Background(), m.class(r))
							var p Permit
							var err error
							patient := false
							switch r.IntN(4) {
							case 0:
								p, err = l.AcquireClass(m.class(r))
							case 1: // patient: waits until served
								patient = true
								ctx, cancel := context.WithTimeout(ctx, time.Minute)
								p, err = l.AcquireContext(ctx)
								cancel()
							default:
								ctx, cancel := context.WithTimeout(ctx, time.Duration(r.IntN(200))*time.Microsecond)
								p, err = l.AcquireContext(ctx)
								cancel()
							}
							if err != nil {
								// A deadline that passed before the call gets its error alone.
								if !errors.Is(err, ErrLimitExceeded) && !errors.Is(err, context.DeadlineExceeded) {
									t.Errorf("AcquireContext: %v", err)
								}
								if patient {
									forgotten.Add(1)
								}
								continue
							}
							served.Add(1)
							holdAndFinish(t, r, &p, &holders, most)
						}
					})
				}
				wg.Wait()
				require.Zero(t, forgotten.Load(), "a patient waiter timed out")
				require.Positive(t, served.Load())
				s := l.Snapshot()
				require.Zero(t, s.InFlight)
				require.Zero(t, s.Waiting)
				require.GreaterOrEqual(t, s.Rejected, s.WaitAbandoned)
				requireIdle(t, l)
				requireNoGoroutineLeft(t, goroutinesBefore)
			})
		}
	})
}
