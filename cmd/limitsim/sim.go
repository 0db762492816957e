package main

import (
	"context"
	"math"
	"sync"

	"github.com/resilience4cata/adaptivelimit"
)

// simulation is one policy's run of a scenario: its own dependency, clients,
// clock and copy of the arrivals. Nothing in it reads the wall clock, so the
// same scenario and seed give the same run.
type simulation struct {
	sc      *scenario
	end     int64 // no call is sent from here on; the run then drains
	timeout int64

	clock     *adaptivelimit.ManualClock
	gates     []gate // one per client
	retired   []gate // the gates of clients that restarted, which their calls admitted before release
	sources   []*source
	steps     []capacityStep
	calls     callTable
	events    eventQueue
	deadlines fifo // admitted calls in arrival order, so in deadline order
	dep       dependency
	rec       *recorder

	nextStep int
	nextTick int64
	slow     float64 // service times are this many times the source's draws
	share    float64 // the share of its peak rate at which the neighbour sends now
	peak     float64 // the neighbour's peak share of the servers; 0 for no neighbour
}

// simulateAll runs every policy of the scenario, each on its own goroutine:
// the runs share nothing, so their results do not depend on the schedule.
func simulateAll(sc *scenario, prof profile) ([]*result, error) {
	results := make([]*result, len(sc.policies))
	errs := make([]error, len(sc.policies))
	var wg sync.WaitGroup
	for i, p := range sc.policies {
		wg.Go(func() { results[i], errs[i] = simulate(sc, prof, p) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return results, nil
}

func simulate(sc *scenario, prof profile, p policy) (*result, error) {
	s := &simulation{
		sc:       sc,
		end:      int64(sc.duration),
		timeout:  int64(sc.timeout),
		clock:    adaptivelimit.NewManualClock(),
		steps:    prof.steps,
		nextTick: int64(sc.window),
		rec:      newRecorder(p, sc.clients, len(sc.classes)),
	}
	s.dep = dependency{calls: &s.calls, events: &s.events, servers: prof.steps[0].servers}
	s.nextStep = 1
	s.peak = prof.neighbourPeak()
	s.applyStep(prof.steps[0])
	for c := range sc.clients {
		g, err := p.newGate(s.clock, c, sc)
		if err != nil {
			return nil, err
		}
		s.gates = append(s.gates, g)
	}
	for i := range sc.sourceCount() {
		src := newSource(sc.seed, i, int32(i%sc.clients), sc)
		s.sources = append(s.sources, src)
		s.schedule(int32(i), 0)
	}
	if s.peak > 0 {
		i := len(s.sources)
		s.sources = append(s.sources, newNeighbour(sc.seed, s.peak, sc))
		s.schedule(int32(i), 0)
	}
	if err := s.run(); err != nil {
		return nil, err
	}
	for _, g := range append(s.gates, s.retired...) {
		s.rec.res.leaked += g.inFlight()
	}
	return s.rec.res, nil
}

// run processes events in time order until nothing is left, or a restarted client's gate
// cannot be built. At one instant a
// window's sample comes first (it describes the window that just ended), then
// a capacity change, completions, deadlines and arrivals.
func (s *simulation) run() error {
	const never = int64(math.MaxInt64)
	restartAt := int64(s.sc.restart)
	if restartAt <= 0 || restartAt >= s.end {
		restartAt = never
	}
	for {
		tickAt, stepAt, heapAt, deadline := never, never, never, never
		if s.nextTick <= s.end {
			tickAt = s.nextTick
		}
		if s.nextStep < len(s.steps) && s.steps[s.nextStep].at < s.end {
			stepAt = s.steps[s.nextStep].at
		}
		if s.events.len() > 0 {
			heapAt = s.events.peek().at
		}
		if s.deadlines.len() > 0 {
			deadline = s.calls.calls[s.deadlines.front()].arrival + s.timeout
		}
		first := min(tickAt, stepAt, heapAt, deadline, restartAt)
		switch {
		case first == never:
			return nil
		case restartAt == first && tickAt != first:
			s.clock.Set(first)
			if err := s.restartClient(0); err != nil {
				return err
			}
			restartAt = never
		case tickAt == first:
			s.rec.sample(tickAt, s.dep.servers, s.gates, s.sc.window.Seconds())
			s.nextTick += int64(s.sc.window)
		case stepAt == first:
			s.applyStep(s.steps[s.nextStep])
			s.dep.setServers(s.steps[s.nextStep].servers, stepAt)
			s.nextStep++
		case heapAt == first && s.events.peek().kind == evCompletion:
			s.clock.Set(first)
			s.complete(s.events.pop().id, first)
		case deadline == first:
			s.clock.Set(first)
			s.expire(s.deadlines.popFront(), first)
		default:
			s.clock.Set(first)
			s.arrive(s.events.pop().id, first)
		}
	}
}

// restartClient gives client c a new gate, as a restarted process has: an adaptive policy's
// limiter starts again from its initial limit. The calls admitted before release the old
// gate's slots. A fixed bulkhead is the same bulkhead after a restart.
func (s *simulation) restartClient(c int) error {
	p := s.rec.res.policy
	if !p.adaptive() {
		return nil
	}
	g, err := p.newGate(s.clock, s.sc.clients+c, s.sc)
	if err != nil {
		return err
	}
	s.retired = append(s.retired, s.gates[c])
	s.gates[c] = g
	return nil
}

// windowOf is the index of the window that holds instant at.
func (s *simulation) windowOf(at int64) int { return int(at / int64(s.sc.window)) }

// schedule plans source i's next call at gap from now, if that is before the end.
func (s *simulation) schedule(i int32, now int64) {
	if at := now + s.sources[i].gap(); at < s.end {
		s.events.push(event{at: at, kind: evArrival, id: i})
	}
}

// applyStep takes on a step's slowdown and neighbour share.
func (s *simulation) applyStep(step capacityStep) {
	s.slow = step.slow
	if s.peak > 0 {
		s.share = step.neighbour / s.peak
	}
}

func (s *simulation) arrive(i int32, now int64) {
	src := s.sources[i]
	service := int64(float64(src.serviceTime()) * s.slow)
	if !src.closedLoop() {
		s.schedule(i, now)
	}
	if src.neighbour() {
		// Poisson arrivals at the peak rate, each kept with the share of the moment: a
		// Poisson stream at the rate of the moment.
		if src.rng.Float64() < s.share {
			id := s.calls.alloc()
			s.calls.calls[id] = call{arrival: now, service: service, source: i}
			s.deadlines.pushBack(id)
			s.dep.submit(id, now)
		}
		return
	}
	lost := src.lose()
	s.rec.offer(src.client)
	if lost {
		s.rec.unloaded(s.timeout)
	} else {
		s.rec.unloaded(min(service, s.timeout))
	}
	class := src.class()
	s.rec.offerClass(class, s.windowOf(now))
	permit, ok := s.gates[src.client].acquire(class)
	if !ok {
		s.rec.reject(src.client)
		s.rec.rejectClass(class)
		if src.closedLoop() {
			s.schedule(i, now)
		}
		return
	}
	s.rec.admit(now)
	id := s.calls.alloc()
	s.calls.calls[id] = call{arrival: now, service: service, permit: permit.Move(), source: i, class: class}
	s.deadlines.pushBack(id)
	if !lost { // a lost call never reaches the dependency: its caller waits for its timeout
		s.dep.submit(id, now)
	}
}

func (s *simulation) complete(id int32, now int64) {
	if !s.calls.calls[id].answered {
		s.answer(id, now, nil)
	}
	s.dep.finish(id, now)
	if s.calls.calls[id].releasable() {
		s.calls.release(id)
	}
}

func (s *simulation) expire(id int32, now int64) {
	c := &s.calls.calls[id]
	c.expired = true
	if !c.answered {
		s.answer(id, now, context.DeadlineExceeded)
		if c.waiting {
			s.dep.leave(id)
		}
	}
	if c.releasable() {
		s.calls.release(id)
	}
}

// answer gives the caller its answer, or its timeout, and frees its slot: a
// timeout finishes the permit with context.DeadlineExceeded, which the
// limiter counts as a drop.
func (s *simulation) answer(id int32, now int64, err error) {
	c := &s.calls.calls[id]
	c.answered = true
	src := s.sources[c.source]
	if src.neighbour() {
		return
	}
	s.rec.answer(src.client, now-c.arrival, err == nil)
	s.rec.answerClass(c.class, s.windowOf(c.arrival), err == nil)
	s.rec.settle(now, now-c.arrival, s.sc.window.Seconds())
	s.rec.release(now)
	s.gates[src.client].release(&c.permit, err)
	if src.closedLoop() {
		s.schedule(c.source, now)
	}
}
