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
type workerPool struct {
	abortable bool

	mu      sync.Mutex
	workers int
	busy    int
	waiting []chan struct{} // closed when the request gets a worker
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
	if err := p.acquire(ctx); err != nil {
		http.Error(w, "deadline passed in the queue", http.StatusGatewayTimeout)
		return
	}
	if p.abortable {
		select {
		case <-time.After(service):
		case <-r.Context().Done():
		}
	} else {
		time.Sleep(service)
	}
	p.release()
	w.Write([]byte("ok\n"))
}

// acquire takes a worker, waiting in line if none is free, until ctx is done.
func (p *workerPool) acquire(ctx context.Context) error {
	p.mu.Lock()
	if p.busy < p.workers && len(p.waiting) == 0 {
		p.busy++
		p.mu.Unlock()
		return nil
	}
	turn := make(chan struct{})
	p.waiting = append(p.waiting, turn)
	p.mu.Unlock()

	select {
	case <-turn:
		return nil
	case <-ctx.Done():
		p.mu.Lock()
		defer p.mu.Unlock()
		if i := slices.Index(p.waiting, turn); i >= 0 {
			p.waiting = slices.Delete(p.waiting, i, i+1)
			return ctx.Err()
		}
		// The worker was handed over just as the deadline passed: give it back.
		p.busy--
		p.grant()
		return ctx.Err()
	}
}

func (p *workerPool) release() {
	p.mu.Lock()
	p.busy--
	p.grant()
	p.mu.Unlock()
}

// setWorkers changes the capacity. Fewer workers interrupt nothing.
func (p *workerPool) setWorkers(n int) {
	p.mu.Lock()
	p.workers = n
	p.grant()
	p.mu.Unlock()
}

func (p *workerPool) capacity() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.workers
}

// grant hands free workers to the longest-waiting requests. p.mu is held.
func (p *workerPool) grant() {
	for p.busy < p.workers && len(p.waiting) > 0 {
		p.busy++
		close(p.waiting[0])
		p.waiting = p.waiting[1:]
	}
}
