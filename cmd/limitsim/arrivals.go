package main

import (
	"math"
	"math/rand/v2"
)

// Each source, the profile and each client's limiter draw from their own PCG
// stream of the run's seed, so that a source's calls do not depend on what
// other sources or the policy did: every policy sees the same calls in open
// loop. A source draws its calls' classes from a stream of its own too, so that a
// scenario with classes sends the very calls (arrivals, service times) that the same
// scenario without them sends with the same seed: the difference between the two
// runs is what the classes do, not other draws.
const (
	streamProfile      = 1
	streamNeighbour    = 2
	streamFirstSource  = 1000
	streamFirstLoss    = 1_000_000_000
	streamFirstClass   = 2_000_000_000
	streamFirstLimiter = 1 << 40 // past any source's stream
)

// source sends calls: an open-loop Poisson stream, or one closed-loop user who
// thinks between the answer to one call and the next call.
type source struct {
	rng    *rand.Rand
	client int32 // the client, and so the limiter, its calls go through; -1 for the neighbour

	classRng *rand.Rand // draws each call's class, from a stream of its own; nil without classes
	shares   []float64  // with classes: each class's share of the calls, highest class first

	lossRng *rand.Rand // draws which calls are lost, from a stream of its own; nil when none is
	lost    float64

	meanGapNs float64 // open loop: mean time between arrivals
	thinkNs   float64 // closed loop: mean think time; 0 in open loop

	serviceMu, serviceSigma float64 // lognormal service time, in ln(ns)
}

// newSource returns source index of the scenario, for client. With classes it sends the
// calls it sends without them, and gives each a class drawn with the classes' shares.
func newSource(seed uint64, index int, client int32, sc *scenario) *source {
	s := &source{
		rng:          rand.New(rand.NewPCG(seed, streamFirstSource+uint64(index))),
		client:       client,
		serviceSigma: sc.serviceSigma,
	}
	if len(sc.classes) > 0 {
		s.classRng = rand.New(rand.NewPCG(seed, streamFirstClass+uint64(index)))
		for _, c := range sc.classes {
			s.shares = append(s.shares, c.share)
		}
	}
	s.serviceMu = lognormalMu(sc)
	if sc.lost > 0 {
		s.lossRng = rand.New(rand.NewPCG(seed, streamFirstLoss+uint64(index)))
		s.lost = sc.lost
	}
	if sc.users > 0 {
		s.thinkNs = float64(sc.think)
	} else {
		perClient := sc.offeredRate() / float64(sc.clients)
		s.meanGapNs = 1e9 / perClient
	}
	return s
}

// newNeighbour returns the unlimited neighbour: open-loop arrivals that keep a
// share peak of the scenario's servers busy, with the clients' service times.
func newNeighbour(seed uint64, peak float64, sc *scenario) *source {
	s := &source{
		rng:          rand.New(rand.NewPCG(seed, streamNeighbour)),
		client:       -1,
		serviceSigma: sc.serviceSigma,
		meanGapNs:    1e9 / (peak * sc.capacityRate(sc.servers)),
	}
	s.serviceMu = lognormalMu(sc)
	return s
}

// lognormalMu is mu of the scenario's service time: a lognormal with mean m and
// shape sigma has mu = ln(m) - sigma²/2.
func lognormalMu(sc *scenario) float64 {
	return math.Log(float64(sc.serviceMean)) - sc.serviceSigma*sc.serviceSigma/2
}

func (s *source) closedLoop() bool { return s.thinkNs > 0 }

func (s *source) neighbour() bool { return s.client < 0 }

// lose draws whether the next call is lost on the way.
func (s *source) lose() bool { return s.lossRng != nil && s.lossRng.Float64() < s.lost }

// class draws the index of the next call's class in the scenario's classes: 0 without
// classes, and otherwise class k with its share of the calls.
func (s *source) class() int32 {
	if s.classRng == nil {
		return 0
	}
	u := s.classRng.Float64()
	for k, share := range s.shares[:len(s.shares)-1] {
		if u < share {
			return int32(k)
		}
		u -= share
	}
	return int32(len(s.shares) - 1)
}

// serviceTime draws the time a server needs for the next call.
func (s *source) serviceTime() int64 {
	return int64(math.Exp(s.serviceMu + s.serviceSigma*s.rng.NormFloat64()))
}

// gap draws the time from now to this source's next call: the next Poisson
// arrival in open loop, a think time in closed loop.
func (s *source) gap() int64 {
	if s.closedLoop() {
		return 1 + int64(s.rng.ExpFloat64()*s.thinkNs)
	}
	return 1 + int64(s.rng.ExpFloat64()*s.meanGapNs)
}
