package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/httplimit"
)

// The edge of a real HTTP server behind httplimit.Middleware with its defaults, as a user
// who sets nothing gets it: a worker pool (a FIFO queue, lognormal service times of mean
// edgeService) on 127.0.0.1. HTTP carries no deadline, so the server learns of
// its clients' timeouts only when they go away (adaptivelimit.Departed); so do the clients
// that go away at will. These tests run without the race detector only (make test's modules
// leg), in real time; LIMITSIM_OVERLOAD=0 skips them.
const (
	edgeService = 20 * time.Millisecond
	edgeSigma   = 0.1 // of the service time's logarithm: the slowest in 10,000 takes 29 ms
)

// edgeAttempts is how many runs a real-time cell gets before its miss is an error. make test
// runs these beside its other legs on 2 cores, where a run's timers can stall for tens of
// milliseconds and time a few hundred calls out; a limiter that misses does so in every run.
const edgeAttempts = 3

// retryEdge runs cell, which returns its misses, until a run has none, edgeAttempts times at
// most; it logs the misses of each run but the last, whose it reports as errors.
func retryEdge(t *testing.T, cell func() (misses []string)) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		misses := cell()
		if len(misses) == 0 {
			return
		}
		if attempt == edgeAttempts {
			for _, m := range misses {
				t.Error(m)
			}
			return
		}
		t.Logf("run %d of %d missed, again: %s", attempt, edgeAttempts, strings.Join(misses, "; "))
	}
}

func skipEdge(t *testing.T) {
	if raceDetector || testing.Short() || os.Getenv("LIMITSIM_OVERLOAD") == "0" {
		t.Skip("a real-time run: without -race and -short only")
	}
}

// TestMiddlewareOverload, the test of the departures' signal before issue 36, as it was: 10
// workers of 40 ms whose requests run to the end once a worker took them, a client at twice
// their capacity whose requests give up after 120 ms, for a minute, Middleware's defaults.
// AIMD starts above the capacity here (InitialLimit 20), so the least latency it sees is a
// queued one: its departures bound it all the same (docs/behaviour.md#departures). Without
// them AIMD raises its limit by one a window for good, its queue grows past the clients'
// timeout, and the goodput collapses (16.6%).
func TestMiddlewareOverload(t *testing.T) {
	skipEdge(t)
	t.Parallel() // beside the other mostly idle real-time runs, after the CPU-bound tests
	const (
		run     = 60 * time.Second
		timeout = 120 * time.Millisecond
	)
	pool := edgePool{workers: 10, service: 40 * time.Millisecond, sigma: 0.3} // the slowest in 10,000 takes 96 ms
	capacity := float64(pool.workers) / pool.service.Seconds()
	// The most calls that can be in flight without their latency passing the timeout: a limit
	// that grows beyond it unbounded is what the signal prevents.
	bound := int(capacity * timeout.Seconds() * 1.25)
	for _, algorithm := range []adaptivelimit.Algorithm{adaptivelimit.AIMD, adaptivelimit.LossDelay} {
		t.Run(algorithm.String(), func(t *testing.T) {
			t.Parallel()
			retryEdge(t, func() (misses []string) {
				l, err := adaptivelimit.New(adaptivelimit.Config{Name: algorithm.String(), Algorithm: algorithm})
				if err != nil {
					t.Fatal(err)
				}
				e := startEdge(l, pool)
				r := e.send(2*capacity, timeout, run, 0)
				e.stop()
				goodput := float64(r.ok) / run.Seconds()
				t.Logf("%v: goodput %.0f/s of a capacity of %.0f/s (%.1f%%); %d sent, %d rejected, %d late; limit at most %d, last %d; %d drops",
					algorithm, goodput, capacity, 100*goodput/capacity, r.sent, r.rejected, r.late, e.highest, l.Limit(), l.Snapshot().Drops)
				if goodput < 0.9*capacity {
					misses = append(misses, fmt.Sprintf("goodput %.0f/s, below 90%% of the capacity of %.0f/s", goodput, capacity))
				}
				if algorithm == adaptivelimit.AIMD && e.highest > bound {
					misses = append(misses, fmt.Sprintf("AIMD's limit rose to %d, beyond %d", e.highest, bound))
				}
				return misses
			})
		})
	}
}

// TestMiddlewareTimeouts: a client at twice the capacity, whose requests give up after 60 ms
// or 120 ms, for overloadRun, at Middleware's defaults but for AIMD's windows of
// overloadWindow, so that, raising its limit by one a window, it would pass the bound within
// the run without a signal. The departures of the requests that waited too long are that
// signal (TestMiddlewareOverload has the defaults' windows, and a minute).
func TestMiddlewareTimeouts(t *testing.T) {
	skipEdge(t)
	t.Parallel() // beside the other mostly idle real-time runs, after the CPU-bound tests
	const (
		workers        = 10
		overloadRun    = 15 * time.Second
		overloadWindow = 100 * time.Millisecond
	)
	capacity := float64(workers) / edgeService.Seconds()
	for _, timeout := range []time.Duration{60 * time.Millisecond, 120 * time.Millisecond} {
		for _, algorithm := range []adaptivelimit.Algorithm{adaptivelimit.AIMD, adaptivelimit.LossDelay} {
			t.Run(fmt.Sprint(algorithm, "/", timeout), func(t *testing.T) {
				c := adaptivelimit.Config{Name: algorithm.String(), Algorithm: algorithm}
				if algorithm == adaptivelimit.AIMD {
					c.Window = overloadWindow
				}
				retryEdge(t, func() (misses []string) {
					l, err := adaptivelimit.New(c)
					if err != nil {
						t.Fatal(err)
					}
					e := startEdge(l, abortable(workers))
					r := e.send(2*capacity, timeout, overloadRun, overloadRun/2)
					e.stop()
					goodput := float64(r.ok) / overloadRun.Seconds()
					t.Logf("%v, %v timeout: goodput %.0f/s of a capacity of %.0f/s (%.1f%%); %d sent, %d rejected, %d late; limit %d-%d in the second half, last %d; %d drops",
						algorithm, timeout, goodput, capacity, 100*goodput/capacity, r.sent, r.rejected, r.late, e.lowest, e.highest, l.Limit(), l.Snapshot().Drops)
					if goodput < 0.9*capacity {
						misses = append(misses, fmt.Sprintf("goodput %.0f/s, below 90%% of the capacity of %.0f/s", goodput, capacity))
					}
					// The most calls that can be in flight without their latency passing the
					// timeout, and the fewest that keep every worker busy.
					if bound := int(capacity * timeout.Seconds() * 1.25); algorithm == adaptivelimit.AIMD && e.highest > bound {
						misses = append(misses, fmt.Sprintf("AIMD's limit rose to %d, beyond %d", e.highest, bound))
					}
					if algorithm == adaptivelimit.AIMD && e.lowest < workers {
						misses = append(misses, fmt.Sprintf("AIMD's limit fell to %d, below the %d workers", e.lowest, workers))
					}
					return misses
				})
			})
		}
	}
}

// TestMiddlewareDepartures: one client at 80% of the capacity whose requests give up after
// 100 ms, beside K clients that each send 20 requests a second and close the connection at
// once, for departRun per cell. Departures lower no limit while the dependency does not
// queue, so the client keeps 95% of what it gets alone. With every departure at a full
// limiter a drop, AIMD's and LossDelay's limits fell below the workers and the client kept
// 64-74% at K = 20 (docs/integrations.md).
func TestMiddlewareDepartures(t *testing.T) {
	skipEdge(t)
	t.Parallel() // beside the other mostly idle real-time runs, after the CPU-bound tests
	const (
		workers   = 20
		departRun = 8 * time.Second
	)
	rate := 0.8 * float64(workers) / edgeService.Seconds()
	for _, algorithm := range []adaptivelimit.Algorithm{adaptivelimit.AIMD, adaptivelimit.LossDelay, adaptivelimit.Gradient2} {
		t.Run(algorithm.String(), func(t *testing.T) {
			var alone float64
			for _, k := range []int{0, 1, 5, 20} {
				retryEdge(t, func() []string {
					l, err := adaptivelimit.New(adaptivelimit.Config{Name: algorithm.String(), Algorithm: algorithm})
					if err != nil {
						t.Fatal(err)
					}
					e := startEdge(l, abortable(workers))
					go e.depart(20*float64(k), departRun)
					r := e.send(rate, 100*time.Millisecond, departRun, departRun/2)
					e.stop()
					goodput := float64(r.ok) / departRun.Seconds()
					if k == 0 {
						alone = goodput
					}
					t.Logf("%-9v K=%-2d %4.0f/s (%5.1f%%), limit %d-%d in the second half; %d sent, %d rejected, %d late; %d drops, %d ignored",
						algorithm, k, goodput, 100*goodput/alone, e.lowest, e.highest, r.sent, r.rejected, r.late, l.Snapshot().Drops, l.Snapshot().Ignored)
					if goodput < 0.95*alone {
						return []string{fmt.Sprintf("K=%d: %.0f/s, below 95%% of the %.0f/s the client gets alone", k, goodput, alone)}
					}
					return nil
				})
			}
		})
	}
}

// edge is a worker pool behind Middleware(l) on 127.0.0.1, and the limit's range in the part
// of a run that send measures it in.
type edge struct {
	l                *adaptivelimit.Limiter
	pool             edgePool
	srv              *httptest.Server
	client           *http.Client
	measuring        atomic.Bool
	lowest, highest  int
	done             chan struct{}
	watching         sync.WaitGroup
	departing, calls sync.WaitGroup
}

// edgePool is an edge's worker pool: workers, each request's service time lognormal of mean
// service, sigma its logarithm's, and whether a request stops working when its client goes
// away, as a handler that hands r.Context() to its work does.
type edgePool struct {
	workers   int
	service   time.Duration
	sigma     float64
	abortable bool
}

// abortable is the pool of workers of edgeService, which stop when their client goes away.
func abortable(workers int) edgePool {
	return edgePool{workers: workers, service: edgeService, sigma: edgeSigma, abortable: true}
}

// startEdge serves p behind Middleware(l).
func startEdge(l *adaptivelimit.Limiter, p edgePool) *edge {
	pool := newWorkerPool(p.workers)
	pool.abortable = p.abortable
	e := &edge{l: l, pool: p, srv: httptest.NewServer(httplimit.Middleware(l)(pool)), lowest: math.MaxInt, done: make(chan struct{})}
	e.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1000}}
	e.watching.Add(1)
	go func() { // the limit's range, read every 10 ms
		defer e.watching.Done()
		for {
			select {
			case <-e.done:
				return
			case <-time.After(10 * time.Millisecond):
				if e.measuring.Load() {
					e.lowest, e.highest = min(e.lowest, l.Limit()), max(e.highest, l.Limit())
				}
			}
		}
	}()
	return e
}

func (e *edge) stop() {
	e.departing.Wait()
	e.calls.Wait()
	close(e.done)
	e.watching.Wait()
	e.client.CloseIdleConnections()
	e.srv.Close()
}

type edgeResult struct{ sent, ok, rejected, late int64 }

// send sends rate requests a second, each at its own moment, for run, each giving up after
// timeout, and counts the answers; the limit's range is read from measureFrom on.
func (e *edge) send(rate float64, timeout, run, measureFrom time.Duration) edgeResult {
	var r edgeResult
	var ok, rejected, late atomic.Int64
	mu := math.Log(e.pool.service.Seconds()) - e.pool.sigma*e.pool.sigma/2
	interval := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	for next := start; next.Sub(start) < run; next = next.Add(interval) {
		time.Sleep(time.Until(next))
		e.measuring.Store(next.Sub(start) >= measureFrom)
		service := time.Duration(math.Exp(mu+e.pool.sigma*rand.NormFloat64()) * float64(time.Second))
		url := fmt.Sprintf("%s/?service=%v&budget=1h", e.srv.URL, service)
		r.sent++
		e.calls.Add(1)
		go func() {
			defer e.calls.Done()
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			resp, err := e.client.Do(req)
			if err != nil {
				late.Add(1)
				return
			}
			_, err = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			switch {
			case err != nil:
				late.Add(1)
			case resp.StatusCode == http.StatusOK:
				ok.Add(1)
			default:
				rejected.Add(1)
			}
		}()
	}
	e.calls.Wait()
	r.ok, r.rejected, r.late = ok.Load(), rejected.Load(), late.Load()
	return r
}

// depart sends rate requests a second for run, each on a connection of its own that it
// closes as soon as the request is written: clients that go away at once.
func (e *edge) depart(rate float64, run time.Duration) {
	if rate == 0 {
		return
	}
	e.departing.Add(1)
	defer e.departing.Done()
	addr := e.srv.Listener.Addr().String()
	request := []byte("GET /?service=" + e.pool.service.String() + "&budget=1h HTTP/1.1\r\nHost: edge\r\n\r\n")
	interval := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	for next := start; next.Sub(start) < run; next = next.Add(interval) {
		time.Sleep(time.Until(next))
		c, err := net.Dial("tcp", addr)
		if err != nil {
			continue
		}
		_, _ = c.Write(request)
		_ = c.Close()
	}
}
