package main

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// capacityStep says that from at on, the dependency has servers servers, its
// calls take slow times their normal service time, and an unlimited neighbour
// sends calls that keep a share neighbour of the servers busy.
type capacityStep struct {
	at        int64
	servers   int
	slow      float64 // 1 normally
	neighbour float64 // 0 for none
}

// slots is the capacity left to the clients: the servers the neighbour does
// not take.
func (s capacityStep) slots() float64 { return float64(s.servers) * (1 - s.neighbour) }

// profile is the dependency's capacity over a run. steps holds every change
// the dependency sees; marks holds the changes the report measures adaptation
// after: a step's edges, a ramp's ends, a neighbour coming or going.
type profile struct {
	steps []capacityStep
	marks []capacityStep
}

// profileNames lists the profiles in the order the usage text shows them.
var profileNames = []string{"step", "ramp", "noisy", "flat", "incident", "shift", "neighbour"}

func newProfile(name string, servers int, duration time.Duration, seed uint64) (profile, error) {
	d := int64(duration)
	switch name {
	case "step":
		return stepProfile(servers, d), nil
	case "ramp":
		return rampProfile(servers, d), nil
	case "noisy":
		return noisyProfile(servers, d, rand.New(rand.NewPCG(seed, streamProfile))), nil
	case "flat":
		var p profile
		p.add(0, servers, false)
		return p, nil
	case "incident":
		return changeProfile(servers, d, capacityStep{slow: incidentSlow}, true), nil
	case "shift":
		return changeProfile(servers, d, capacityStep{slow: shiftSlow}, false), nil
	case "neighbour":
		return changeProfile(servers, d, capacityStep{neighbour: neighbourShare}, true), nil
	}
	return profile{}, fmt.Errorf("unknown profile %q (want one of %v)", name, profileNames)
}

// stepProfile halves the capacity for the middle third of the run.
func stepProfile(servers int, d int64) profile {
	var p profile
	p.add(0, servers, false)
	p.add(d/3, servers/2, true)
	p.add(2*d/3, servers, true)
	return p
}

// rampProfile starts at half the capacity, scales out one server at a time to
// the full capacity over the second sixth of the run, and scales back in over
// the fifth sixth, as an autoscaler would.
func rampProfile(servers int, d int64) profile {
	var p profile
	half := servers / 2
	p.add(0, half, false)
	p.ramp(d/6, d/2, half, servers)
	p.ramp(2*d/3, 5*d/6, servers, half)
	return p
}

// noisyProfile lets a neighbour take 30-60% of the servers now and then: it
// arrives after an exponential gap (mean a sixth of the run) and stays for an
// exponential time (mean a twelfth of the run, at least 5% of it).
func noisyProfile(servers int, d int64, rng *rand.Rand) profile {
	var p profile
	p.add(0, servers, false)
	t := int64(0)
	for {
		t += int64(rng.ExpFloat64() * float64(d) / 6)
		stay := max(int64(rng.ExpFloat64()*float64(d)/12), d/20)
		taken := 0.3 + 0.3*rng.Float64()
		if t+stay >= d {
			return p
		}
		p.add(t, max(1, servers-int(taken*float64(servers))), true)
		t += stay
		p.add(t, servers, true)
	}
}

// The changes of the incident, shift and neighbour profiles.
const (
	incidentSlow   = 10  // the dependency 10 times slower: with the default timeout, every call times out
	shiftSlow      = 2   // a permanent shift of the latency, as after a move to another region
	neighbourShare = 0.6 // an unlimited neighbour's calls take 60% of the servers
)

// changeProfile keeps the servers and applies change (a slowdown or a
// neighbour) from a third of the run on: for the middle third if it ends, for
// good if not.
func changeProfile(servers int, d int64, change capacityStep, ends bool) profile {
	var p profile
	p.add(0, servers, false)
	change.at, change.servers = d/3, servers
	p.addStep(change, true)
	if ends {
		p.add(2*d/3, servers, true)
	}
	return p
}

func (p *profile) add(at int64, servers int, mark bool) {
	p.addStep(capacityStep{at: at, servers: servers}, mark)
}

func (p *profile) addStep(s capacityStep, mark bool) {
	if s.slow == 0 {
		s.slow = 1
	}
	p.steps = append(p.steps, s)
	if mark {
		p.marks = append(p.marks, s)
	}
}

// at returns the step in effect at instant t.
func (p profile) at(t int64) capacityStep {
	i := 0
	for i+1 < len(p.steps) && p.steps[i+1].at <= t {
		i++
	}
	return p.steps[i]
}

// neighbourPeak is the largest share the neighbour ever takes, 0 for none.
func (p profile) neighbourPeak() float64 {
	peak := 0.0
	for _, s := range p.steps {
		peak = max(peak, s.neighbour)
	}
	return peak
}

// ramp moves the capacity linearly from one server count to another between
// two instants, one server at a time, and marks the end.
func (p *profile) ramp(from, to int64, fromServers, toServers int) {
	n := toServers - fromServers
	dir := 1
	if n < 0 {
		n, dir = -n, -1
	}
	for i := 1; i <= n; i++ {
		at := from + (to-from)*int64(i)/int64(n)
		p.add(at, fromServers+dir*i, i == n)
	}
}

// capacityCalls is how many calls the clients could have had answered over
// [0, end): what the servers left to them complete at the service time of the
// moment, or the offered rate where that is lower (calls per second; +Inf for
// a closed loop, whose rate follows its answers).
func (p profile) capacityCalls(end int64, serviceMean float64, offered float64) float64 {
	total := 0.0
	for i, s := range p.steps {
		if s.at >= end {
			break
		}
		next := end
		if i+1 < len(p.steps) {
			next = min(end, p.steps[i+1].at)
		}
		rate := min(offered, s.slots()/(serviceMean*s.slow))
		total += rate * float64(next-s.at) / 1e9
	}
	return total
}
