package main

// dependency is the service the policies protect: servers that each serve one
// call at a time, and a FIFO queue for calls that find every server busy, so
// that latency rises once more calls are in flight than there are servers.
//
// A call whose caller times out while it waits leaves the queue (the server
// sees the cancelled request and skips it). A call that times out while a
// server works on it keeps that server until its service ends: the work is
// wasted, as it is in a real server that cannot stop a handler.
type dependency struct {
	calls  *callTable
	events *eventQueue

	servers int // capacity now
	busy    int
	queue   fifo // waiting call ids, in arrival order
}

// submit gives the dependency a call at instant now.
func (d *dependency) submit(id int32, now int64) {
	if d.busy < d.servers {
		d.start(id, now)
		return
	}
	d.calls.calls[id].waiting = true
	d.queue.pushBack(id)
}

// leave takes a waiting call whose caller timed out out of the queue. Every
// call has the same timeout, so deadlines fall in arrival order, and a call
// that reaches its deadline while waiting is at the front: everyone who came
// before it has started or left already.
func (d *dependency) leave(id int32) {
	if d.queue.popFront() != id {
		panic("limitsim: a call that timed out was not at the front of the queue")
	}
	d.calls.calls[id].waiting = false
}

// finish frees the server of a call whose service ended at now, and gives it
// to the next waiting call.
func (d *dependency) finish(id int32, now int64) {
	d.calls.calls[id].serving = false
	d.busy--
	d.startWaiting(now)
}

// setServers changes the capacity. Fewer servers interrupt nothing: calls in
// service finish, and the queue moves again once busy is below the new count.
func (d *dependency) setServers(n int, now int64) {
	d.servers = n
	d.startWaiting(now)
}

func (d *dependency) startWaiting(now int64) {
	for d.busy < d.servers && d.queue.len() > 0 {
		id := d.queue.popFront()
		d.calls.calls[id].waiting = false
		d.start(id, now)
	}
}

func (d *dependency) start(id int32, now int64) {
	c := &d.calls.calls[id]
	c.serving = true
	d.busy++
	d.events.push(event{at: now + c.service, kind: evCompletion, id: id})
}
