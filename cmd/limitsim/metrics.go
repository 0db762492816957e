package main

import "math"

// clientStats counts one client's calls.
type clientStats struct {
	offered   int64 // calls the client tried to send
	rejected  int64 // refused by its policy
	completed int64 // answered in time: the goodput
	timeouts  int64 // admitted, then given up at the deadline
}

// sample is the state of one policy's run over one window of time.
type sample struct {
	at       int64   // end of the window
	servers  int     // capacity at the end of the window
	limit    int     // sum of the clients' limits; unlimited for no limit
	exact    float64 // the same as real numbers, a paced limiter's below 1; +Inf for no limit
	inFlight int     // calls admitted and not yet answered, summed over clients, at the end of the window
	meanIn   float64 // the same, averaged over the window's time; the simulation only, -1 in the real mode
	p99      int64   // p99 latency of the calls answered in the window, 0 if none
	goodput  float64 // calls answered in time per second
	answered int64   // calls answered in time in the window
	timeouts int64   // calls that timed out in the window
	baseline float64 // the clients' mean of the latency their limiters take as normal, in ns; 0 if none has one
	limits   []int   // each client's limit; unlimited for no limit
	probed   bool    // whether a client's limiter probed the no-load latency in the window
}

// result is what one policy's run measured.
type result struct {
	policy   policy
	clients  []clientStats
	classes  []classStats // by the scenario's classes; none without
	latency  histogram    // every admitted call, a timed-out one at its timeout
	unloaded histogram    // every offered call as it would have gone with no queue: its service time, capped at the timeout
	settled  histogram    // the admitted calls answered after the first settleWindows windows; the simulation only
	timeline []sample
	leaked   int // calls still holding a slot after the run drained
}

func (r *result) total() clientStats {
	var t clientStats
	for _, c := range r.clients {
		t.offered += c.offered
		t.rejected += c.rejected
		t.completed += c.completed
		t.timeouts += c.timeouts
	}
	return t
}

// jain is Jain's fairness index over the clients' goodput: 1 when they all got
// the same, 1/n when one got everything.
func (r *result) jain() float64 {
	sum, squares := 0.0, 0.0
	for _, c := range r.clients {
		x := float64(c.completed)
		sum += x
		squares += x * x
	}
	if squares == 0 {
		return 0
	}
	return sum * sum / (float64(len(r.clients)) * squares)
}

// recorder counts calls into a result and cuts the timeline into windows. The
// simulation uses it from one goroutine; the real mode guards it with a mutex.
type recorder struct {
	res      *result
	window   histogram // latencies answered since the last sample
	answered int64     // in time, since the last sample
	timeouts int64     // since the last sample

	// The simulation tells admissions and answers as they happen, so that the mean in
	// flight over a window is exact: the integral of the count over time.
	held     int64
	heldFrom int64   // instant of the last change of held
	heldArea float64 // since the last sample, in call-nanoseconds
	timed    bool    // whether admit and release have been called

	probes []uint64 // each gate's probes at the last sample
}

// settleWindows is how many windows the settled histogram leaves out: the first
// runs at the initial limits whatever the algorithm, and the second at what the
// first decided.
const settleWindows = 2

// settle records the latency of a call answered at now into the settled
// histogram, once the first windows are over.
func (r *recorder) settle(now, latency int64, window float64) {
	if float64(now) > settleWindows*window*1e9 {
		r.res.settled.record(latency)
	}
}

// admit and release count a call that takes or gives back a slot at instant now.
func (r *recorder) admit(now int64)   { r.hold(now, 1) }
func (r *recorder) release(now int64) { r.hold(now, -1) }

func (r *recorder) hold(now, delta int64) {
	r.heldArea += float64(r.held) * float64(now-r.heldFrom)
	r.held += delta
	r.heldFrom = now
	r.timed = true
}

func newRecorder(p policy, clients, classes int) *recorder {
	return &recorder{res: &result{policy: p, clients: make([]clientStats, clients), classes: make([]classStats, classes)}}
}

// offerClass, rejectClass and answerClass count a call by its class, where the scenario has
// classes: offered in window, rejected, or answered (in time or not) having been offered in
// window.
func (r *recorder) offerClass(class int32, window int) {
	if len(r.res.classes) > 0 {
		r.res.classes[class].offer(window)
	}
}

func (r *recorder) rejectClass(class int32) {
	if len(r.res.classes) > 0 {
		r.res.classes[class].rejected++
	}
}

func (r *recorder) answerClass(class int32, window int, inTime bool) {
	if len(r.res.classes) > 0 {
		r.res.classes[class].answer(window, inTime)
	}
}

func (r *recorder) offer(client int32) { r.res.clients[client].offered++ }

// unloaded records what an offered call's latency would have been with no
// queue: ns, or the timeout where it is longer or the call is lost.
func (r *recorder) unloaded(ns int64)   { r.res.unloaded.record(ns) }
func (r *recorder) reject(client int32) { r.res.clients[client].rejected++ }

// answer records an admitted call's end: in time, or at its timeout.
func (r *recorder) answer(client int32, latency int64, inTime bool) {
	r.res.latency.record(latency)
	r.window.record(latency)
	if inTime {
		r.res.clients[client].completed++
		r.answered++
	} else {
		r.res.clients[client].timeouts++
		r.timeouts++
	}
}

// sample closes the window that ends at now.
func (r *recorder) sample(now int64, servers int, gates []gate, window float64) {
	limit, inFlight, exact := 0, 0, 0.0
	baselines, known := 0.0, 0
	limits := make([]int, len(gates))
	probed := false
	if len(r.probes) != len(gates) {
		r.probes = make([]uint64, len(gates))
	}
	for i, g := range gates {
		l := g.limit()
		limits[i] = l
		b, n, x := g.learned()
		// A restarted client's gate counts from 0 again.
		if n > r.probes[i] || n < r.probes[i] && n > 0 {
			probed = true
		}
		r.probes[i] = n
		if b > 0 {
			baselines += float64(b)
			known++
		}
		if l == unlimited || limit == unlimited {
			limit, exact = unlimited, math.Inf(1)
		} else {
			limit += l
			exact += x
		}
		inFlight += g.inFlight()
	}
	meanIn := -1.0
	if r.timed {
		r.hold(now, 0)
		meanIn = r.heldArea / (window * 1e9)
		r.heldArea = 0
	}
	r.res.timeline = append(r.res.timeline, sample{
		meanIn:   meanIn,
		at:       now,
		servers:  servers,
		limit:    limit,
		exact:    exact,
		inFlight: inFlight,
		p99:      r.window.quantile(0.99),
		goodput:  float64(r.answered) / window,
		answered: r.answered,
		timeouts: r.timeouts,
		baseline: baselines / float64(max(known, 1)),
		limits:   limits,
		probed:   probed,
	})
	r.window.reset()
	r.answered, r.timeouts = 0, 0
}
