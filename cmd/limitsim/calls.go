package main

import "github.com/resilience4cata/adaptivelimit"

// call is one admitted call. Its record lives until both sides are done with
// it: the caller has its answer or its timeout, and the dependency no longer
// holds it in a server or in the queue.
type call struct {
	arrival int64
	service int64
	permit  adaptivelimit.Permit
	source  int32
	class   int32 // the index of its class in the scenario's classes; 0 without classes

	waiting  bool // in the dependency's queue
	serving  bool // holds one of the dependency's servers
	answered bool // the caller has its answer, or gave up at its deadline
	expired  bool // its deadline has passed
}

func (c *call) releasable() bool { return c.expired && !c.waiting && !c.serving }

// callTable recycles call records by index, so a run allocates only while it
// reaches its largest number of calls alive at once.
type callTable struct {
	calls []call
	free  []int32
}

func (t *callTable) alloc() int32 {
	if n := len(t.free); n > 0 {
		id := t.free[n-1]
		t.free = t.free[:n-1]
		return id
	}
	t.calls = append(t.calls, call{})
	return int32(len(t.calls) - 1)
}

func (t *callTable) release(id int32) {
	t.calls[id] = call{}
	t.free = append(t.free, id)
}
