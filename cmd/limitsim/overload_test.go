package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/httplimit"
)

// The overload of a real HTTP server behind httplimit.Middleware with its defaults, as a
// user who sets nothing gets it: a worker pool of overloadWorkers (a FIFO queue, lognormal
// service times of mean overloadService) on 127.0.0.1, and a client that sends twice its
// capacity for overloadRun, each request giving up after overloadTimeout. HTTP carries no
// deadline, so the server learns of its clients' timeouts only when they go away: the
// middleware ends such a request as adaptivelimit.Departed, a drop while the calls queue
// (docs/behaviour.md#departures). Without that signal AIMD, which reads drops only, raises its
// limit by one a window for good, its queue grows past the clients' timeout, and the goodput
// collapses. AIMD starts above the capacity here (InitialLimit 20, 10 workers), so it never
// sees the latency without a queue: its departures bound it all the same.
const (
	overloadWorkers = 10
	overloadService = 40 * time.Millisecond
	overloadSigma   = 0.3 // of the service time's logarithm: the slowest in 10,000 takes 96 ms
	overloadTimeout = 120 * time.Millisecond
	overloadRun     = 60 * time.Second
)

// TestMiddlewareOverload runs once, without the race detector (make test's modules leg), and
// takes overloadRun; LIMITSIM_OVERLOAD=0 skips it.
func TestMiddlewareOverload(t *testing.T) {
	if raceDetector || testing.Short() || os.Getenv("LIMITSIM_OVERLOAD") == "0" {
		t.Skip("a real-time run of a minute: without -race and -short only")
	}
	capacity := float64(overloadWorkers) / overloadService.Seconds()
	// The most calls that can be in flight without their latency passing the timeout: a
	// limit that grows beyond it unbounded is what the drop signal prevents.
	bound := int(capacity * overloadTimeout.Seconds() * 1.25)
	for _, algorithm := range []adaptivelimit.Algorithm{adaptivelimit.AIMD, adaptivelimit.LossDelay} {
		t.Run(algorithm.String(), func(t *testing.T) {
			t.Parallel()
			l, err := adaptivelimit.New(adaptivelimit.Config{Name: algorithm.String(), Algorithm: algorithm})
			if err != nil {
				t.Fatal(err)
			}
			r := overload(t, l, 2*capacity)
			goodput := float64(r.ok) / overloadRun.Seconds()
			t.Logf("%v: goodput %.0f/s of a capacity of %.0f/s (%.1f%%); %d sent, %d rejected, %d late; limit at most %d, last %d; %d drops",
				algorithm, goodput, capacity, 100*goodput/capacity, r.sent, r.rejected, r.late, r.maxLimit, l.Limit(), l.Snapshot().Drops)
			if goodput < 0.9*capacity {
				t.Errorf("goodput %.0f/s, below 90%% of the capacity of %.0f/s", goodput, capacity)
			}
			if algorithm == adaptivelimit.AIMD && r.maxLimit > bound {
				t.Errorf("AIMD's limit rose to %d, beyond %d", r.maxLimit, bound)
			}
		})
	}
}

type overloadResult struct {
	sent, ok, rejected, late int64
	maxLimit                 int
}

// overload sends rate requests a second, each at its own moment, to a worker pool behind
// Middleware(l) for overloadRun, and counts the answers.
func overload(t *testing.T, l *adaptivelimit.Limiter, rate float64) overloadResult {
	srv := httptest.NewServer(httplimit.Middleware(l)(newWorkerPool(overloadWorkers)))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4 * int(rate)}}
	defer client.CloseIdleConnections()

	var r overloadResult
	var ok, rejected, late atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	go func() { // the limit's highest point, read every 10 ms
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
				r.maxLimit = max(r.maxLimit, l.Limit())
			}
		}
	}()
	mu := math.Log(overloadService.Seconds()) - overloadSigma*overloadSigma/2
	interval := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	for next := start; next.Sub(start) < overloadRun; next = next.Add(interval) {
		time.Sleep(time.Until(next))
		service := time.Duration(math.Exp(mu+overloadSigma*rand.NormFloat64()) * float64(time.Second))
		url := fmt.Sprintf("%s/?service=%v&budget=1h", srv.URL, service)
		r.sent++
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), overloadTimeout)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			resp, err := client.Do(req)
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
	wg.Wait()
	close(stop)
	r.ok, r.rejected, r.late = ok.Load(), rejected.Load(), late.Load()
	return r
}
