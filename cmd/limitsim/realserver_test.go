package main

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"
)

// The real mode runs in real time, so the test checks its parts instead: no
// test here sleeps or reads the clock. The whole -real run is left to people,
// since what it prints depends on the machine's load.

func TestWorkerPoolServesWaitersInFIFOOrder(t *testing.T) {
	p := newWorkerPool(1)
	if _, err := p.acquire(context.Background(), time.Time{}); err != nil {
		t.Fatal(err)
	}
	got := make(chan int, 3)
	for i := range 3 {
		go func() {
			if _, err := p.acquire(context.Background(), time.Time{}); err != nil {
				t.Error(err)
			}
			got <- i
		}()
		waitForWaiters(p, i+1) // in line before the next one starts
	}
	for want := range 3 {
		p.release(time.Time{})
		if i := <-got; i != want {
			t.Fatalf("worker went to waiter %d, want %d", i, want)
		}
	}
	p.release(time.Time{})
	if p.busy != 0 {
		t.Fatalf("busy %d", p.busy)
	}
}

func TestWorkerPoolWaiterLeavesAtItsDeadline(t *testing.T) {
	p := newWorkerPool(1)
	p.acquire(context.Background(), time.Time{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.acquire(ctx, time.Time{}); err == nil {
		t.Fatal("acquired a worker with a cancelled context")
	}
	if len(p.waiting) != 0 || p.busy != 1 {
		t.Fatalf("waiting %d, busy %d", len(p.waiting), p.busy)
	}
}

func TestWorkerPoolMoreWorkersStartWaiters(t *testing.T) {
	p := newWorkerPool(0)
	done := make(chan error)
	go func() {
		_, err := p.acquire(context.Background(), time.Time{})
		done <- err
	}()
	waitForWaiters(p, 1)
	p.setWorkers(1)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if p.capacity() != 1 || p.busy != 1 {
		t.Fatalf("workers %d, busy %d", p.capacity(), p.busy)
	}
}

// A worker handed over starts the next request where the last was due to end,
// however late its release came, or at the request's arrival, if later: the
// pool serves its nominal capacity whatever its timers' lateness.
func TestWorkerPoolHandsOverAtTheScheduledEnd(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	p := newWorkerPool(1)
	if start, _ := p.acquire(context.Background(), at(0)); !start.Equal(at(0)) {
		t.Fatalf("a free worker started at %v, want the arrival", start)
	}
	starts := make(chan time.Time, 2)
	for i, arrived := range []time.Time{at(1), at(30)} {
		go func() {
			start, err := p.acquire(context.Background(), arrived)
			if err != nil {
				t.Error(err)
			}
			starts <- start
		}()
		waitForWaiters(p, i+1)
	}
	p.release(at(20)) // due at 20 ms, whenever it ran
	if got := <-starts; !got.Equal(at(20)) {
		t.Errorf("the first waiter started at %v, want the last service's end, 20 ms", got)
	}
	p.release(at(25)) // due before the second waiter arrived
	if got := <-starts; !got.Equal(at(30)) {
		t.Errorf("the second waiter started at %v, want its arrival, 30 ms", got)
	}
}

func TestWorkerPoolHandler(t *testing.T) {
	p := newWorkerPool(1)
	tests := []struct {
		query string
		want  int
	}{
		{"?service=0s&budget=1s", http.StatusOK},
		{"?service=zero&budget=1s", http.StatusBadRequest},
		{"?service=0s", http.StatusBadRequest},
	}
	for _, tt := range tests {
		w := httptest.NewRecorder()
		p.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/"+tt.query, nil))
		if w.Code != tt.want {
			t.Errorf("%s: status %d, want %d", tt.query, w.Code, tt.want)
		}
	}
	p.setWorkers(0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the caller is gone: the request leaves the queue at once
	w := httptest.NewRecorder()
	p.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/?service=0s&budget=1s", nil).WithContext(ctx))
	if w.Code != http.StatusGatewayTimeout {
		t.Errorf("status %d, want 504", w.Code)
	}
}

func waitForWaiters(p *workerPool, n int) {
	for {
		p.mu.Lock()
		waiting := len(p.waiting)
		p.mu.Unlock()
		if waiting == n {
			return
		}
		runtime.Gosched()
	}
}

// Each second's goodput adds up the windows that end in it, against that second's capacity:
// here 20 workers at 20 ms, 1,000 calls a second, halved in the third second.
func TestSecondShares(t *testing.T) {
	sc := &scenario{serviceMean: 20 * time.Millisecond, load: 2, servers: 20, clients: 1}
	prof := profile{steps: []capacityStep{{at: 0, servers: 20, slow: 1}, {at: int64(2 * time.Second), servers: 10, slow: 1}}}
	ms := int64(time.Millisecond)
	timeline := []sample{
		{at: 250 * ms, answered: 200}, {at: 500 * ms, answered: 200}, {at: 750 * ms, answered: 200}, {at: 1000 * ms, answered: 250},
		{at: 2000 * ms, answered: 960},
		{at: 3000 * ms, answered: 450},
	}
	got := secondShares(timeline, prof, sc, 3)
	want := []float64{85, 96, 90}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			t.Fatalf("second %d: %g%%, want %g%%", i+1, got[i], want[i])
		}
	}
}
