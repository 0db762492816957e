package main

import "testing"

// newTestDependency returns a dependency with n servers and calls 0..k-1,
// each needing service ns of work.
func newTestDependency(servers, k int, service int64) (*dependency, *eventQueue, *callTable) {
	calls, events := &callTable{}, &eventQueue{}
	for range k {
		id := calls.alloc()
		calls.calls[id].service = service
	}
	return &dependency{calls: calls, events: events, servers: servers}, events, calls
}

func TestDependencyQueuesBeyondItsServersInFIFOOrder(t *testing.T) {
	d, events, _ := newTestDependency(2, 5, 10)
	for id := range int32(5) {
		d.submit(id, 0)
	}
	if d.busy != 2 || d.queue.len() != 3 {
		t.Fatalf("busy %d, queued %d", d.busy, d.queue.len())
	}
	var order []int32
	for events.len() > 0 {
		e := events.pop()
		order = append(order, e.id)
		d.finish(e.id, e.at)
	}
	for i, id := range order {
		if id != int32(i) {
			t.Fatalf("service order %v", order)
		}
	}
}

func TestDependencyCapacityChangeInterruptsNothing(t *testing.T) {
	d, events, _ := newTestDependency(4, 6, 10)
	for id := range int32(6) {
		d.submit(id, 0)
	}
	d.setServers(1, 1)
	if d.busy != 4 || events.len() != 4 {
		t.Fatalf("fewer servers stopped calls: busy %d", d.busy)
	}
	for range 3 {
		e := events.pop()
		d.finish(e.id, e.at)
	}
	if d.busy != 1 || d.queue.len() != 2 {
		t.Fatalf("busy %d, queued %d; want the queue to wait for busy < 1", d.busy, d.queue.len())
	}
	d.setServers(3, 20)
	if d.busy != 3 || d.queue.len() != 0 {
		t.Fatalf("more servers did not start the queue: busy %d, queued %d", d.busy, d.queue.len())
	}
}

func TestDependencyLeaveTakesTheFrontOut(t *testing.T) {
	d, events, calls := newTestDependency(1, 3, 10)
	for id := range int32(3) {
		d.submit(id, 0)
	}
	d.leave(1) // call 1 reaches its deadline first among the waiting
	if calls.calls[1].waiting || d.queue.len() != 1 {
		t.Fatalf("call 1 still waits")
	}
	e := events.pop()
	d.finish(e.id, e.at)
	if next := events.pop(); next.id != 2 {
		t.Fatalf("started call %d after call 0, want 2", next.id)
	}
}
