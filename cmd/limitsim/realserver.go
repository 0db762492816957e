package main

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"
)

// workerPool is the real mode's dependency: an HTTP handler with a number of
// workers that changes on schedule. A request that finds every worker busy
// waits its turn in FIFO order, and leaves the queue when its deadline passes;
// a request a worker has taken runs to the end, as in the simulation, or, where
// abortable, until its client goes away.
//
// A worker handed from one request to the next starts the next where the last
// was due to end, not where its timer fired: a sleep ends some 0.5 ms late on a
// busy machine, which would make 20 workers of 20 ms serve some 2.5% less than
// the 1,000 calls a second that the report counts as the capacity.
type workerPool struct {
	abortable bool

	mu      sync.Mutex
	workers int
	busy    int
	waiting []*waiter
}

// waiter is a request in the queue.
type waiter struct {
	arrived time.Time
	start   time.Time     // when its service starts; set before turn is closed
	turn    chan struct{} // closed when the request gets a worker
}

func newWorkerPool(workers int) *workerPool { return &workerPool{workers: workers} }

// ServeHTTP serves /?service=20ms&budget=100ms: it waits at most budget for
// a worker, then holds the worker for service. The budget is the caller's
// timeout, sent along as gRPC sends its deadline.
func (p *workerPool) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	service, err1 := time.ParseDuration(r.URL.Query().Get("service"))
	budget, err2 := time.ParseDuration(r.URL.Query().Get("budget"))
	if err1 != nil || err2 != nil || service < 0 || budget <= 0 {
		http.Error(w, "want ?service=DURATION&budget=DURATION", http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), budget)
	defer cancel()
	start, err := p.acquire(ctx, time.Now())
	if err != nil {
		http.Error(w, "deadline passed in the queue", http.StatusGatewayTimeout)
		return
	}
	end := start.Add(service)
	if p.abortable {
		t := time.NewTimer(time.Until(end))
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			end = time.Now()
		}
	} else {
		time.Sleep(time.Until(end))
	}
	p.release(end)
	w.Write([]byte("ok\n"))
}

// acquire takes a worker for a request that arrived at arrived, waiting in
// line if none is free, until ctx is done. It returns when the request's service
// starts: arrived, or where it waited, when the worker's last service was due to
// end, if later.
func (p *workerPool) acquire(ctx context.Context, arrived time.Time) (time.Time, error) {
	p.mu.Lock()
	if p.busy < p.workers && len(p.waiting) == 0 {
		p.busy++
		p.mu.Unlock()
		return arrived, nil
	}
	w := &waiter{arrived: arrived, turn: make(chan struct{})}
	p.waiting = append(p.waiting, w)
	p.mu.Unlock()

	select {
	case <-w.turn:
		return w.start, nil
	case <-ctx.Done():
		p.mu.Lock()
		defer p.mu.Unlock()
		if i := slices.Index(p.waiting, w); i >= 0 {
			p.waiting = slices.Delete(p.waiting, i, i+1)
			return time.Time{}, ctx.Err()
		}
		// The worker was handed over just as the deadline passed: give it back.
		p.busy--
		p.grant(w.start)
		return time.Time{}, ctx.Err()
	}
}

// release frees a worker whose service was due to end at end.
func (p *workerPool) release(end time.Time) {
	p.mu.Lock()
	p.busy--
	p.grant(end)
	p.mu.Unlock()
}

// setWorkers changes the capacity. Fewer workers interrupt nothing.
func (p *workerPool) setWorkers(n int) {
	p.mu.Lock()
	p.workers = n
	p.grant(time.Now())
	p.mu.Unlock()
}

func (p *workerPool) capacity() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.workers
}

// grant hands free workers to the longest-waiting requests, each starting at
// free or at its arrival, whichever is later. p.mu is held.
func (p *workerPool) grant(free time.Time) {
	for p.busy < p.workers && len(p.waiting) > 0 {
		w := p.waiting[0]
		p.busy++
		w.start = free
		if w.arrived.After(free) {
			w.start = w.arrived
		}
		close(w.turn)
		p.waiting = p.waiting[1:]
	}
}
