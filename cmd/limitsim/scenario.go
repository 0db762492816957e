package main

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// scenario is everything a run depends on. The same scenario and seed give the
// same output, byte for byte.
type scenario struct {
	name    string
	profile string // capacity over time: step, ramp or noisy
	servers int    // the dependency's nominal capacity: concurrent calls it serves without queueing

	serviceMean  time.Duration // lognormal service time
	serviceSigma float64

	duration time.Duration
	load     float64       // offered load as a multiple of the nominal capacity
	users    int           // closed loop when > 0: this many users, each thinking between calls
	think    time.Duration // closed loop: mean think time
	clients  int           // fleet size: clients, each with its own limiter, share the dependency
	restart  time.Duration // when > 0, client 0 restarts then: a new limiter, at its initial limit

	lost      float64       // share of the calls lost on the way (a dropped packet): each times out, whatever the load
	timeout   time.Duration // every caller's timeout, the same for every policy
	window    time.Duration // the limiters' window, and the timeline's resolution
	low, high int           // the fixed bulkheads
	limits    limits        // the adaptive limiters' bounds and queue size; 0 is the library's default
	classes   []callClass   // the calls' priority classes, highest first; none for calls all alike
	critical  float64       // with classes: the critical calls' offered load, a share of the nominal capacity
	kinds     []string      // the policies to compare, from policyKinds
	policies  []policy      // built from kinds by buildPolicies
	seed      uint64
	real      bool // run in real time against HTTP servers instead of simulating
}

// scenarioNames lists the presets in the order the usage text shows them.
var scenarioNames = []string{"step", "single", "ramp", "noisy", "closed", "fleet", "fleet20", "fleet50", "incident", "shift", "neighbour", "lossy", "restart", "priority", "fanin"}

// preset returns a named scenario with every policy. "step" is the default:
// the capacity halves for the middle third of the run.
func preset(name string) (scenario, error) {
	sc := scenario{
		name:         name,
		profile:      "step",
		servers:      50,
		serviceMean:  10 * time.Millisecond,
		serviceSigma: 0.4,
		duration:     180 * time.Second,
		load:         2,
		clients:      1,
		timeout:      50 * time.Millisecond,
		window:       time.Second,
		low:          20,
		high:         150,
		seed:         1,
	}
	switch name {
	case "step":
	case "single":
		// What a user meets first: one client in front of a dependency of its own, at a
		// capacity that does not change.
		sc.profile = "flat"
	case "ramp", "noisy":
		sc.profile = name
	case "closed":
		sc.think = 40 * time.Millisecond
		sc.users = sc.closedUsers()
	case "fleet", "fleet20", "fleet50":
		// 100 servers, and 5, 20 or 50 clients starting at the library's initial limit of 20:
		// the sum of the limits starts at 1, 4 or 10 times the capacity. The bulkheads add up
		// to about 40 and 300 slots whatever the fleet.
		sc.servers = 100
		sc.clients = map[string]int{"fleet": 5, "fleet20": 20, "fleet50": 50}[name]
		sc.low, sc.high = max(1, 40/sc.clients), 300/sc.clients
	case "incident", "neighbour":
		sc.profile = name
	case "shift":
		// Low load, so that a limit that holds the new latency against the old one rejects
		// calls the dependency could serve.
		sc.profile = name
		sc.load = 0.3
	case "lossy":
		sc.lost = 0.005
	case "restart":
		// A steady fleet of 10 at 10 each, and one of them restarts a third into the run,
		// at the library's initial limit of 20: what a deploy does to a fleet.
		sc.profile = "flat"
		sc.servers, sc.clients = 100, 10
		sc.low, sc.high = 40/sc.clients, 300/sc.clients
		sc.restart = sc.duration / 3
	case "priority":
		// The step profile's halving, with the calls in two classes: the adaptive limiters
		// keep a reserve for the critical ones, and shed the sheddable ones first.
		sc.classes = priorityClasses(priorityReserve)
		sc.critical = defaultCritical
	case "fanin":
		// A fleet far wider than the dependency: 1000 clients in front of 50 servers, each
		// client's fair share 0.05 calls in flight. The bulkheads follow -clients (fanin.go).
		sc.clients = faninClients
	default:
		return scenario{}, fmt.Errorf("unknown scenario %q (want one of %s)", name, strings.Join(scenarioNames, ", "))
	}
	sc.kinds = policyKinds
	if name == "fanin" {
		sc.kinds = faninKinds
	}
	sc.fitBulkheads()
	return sc, nil
}

// newProfile builds the scenario's profile. A restart is marked on it as a change, so
// that the report measures the limits' adaptation and the goodput's recovery after it.
func (sc *scenario) newProfile() (profile, error) {
	prof, err := newProfile(sc.profile, sc.servers, sc.duration, sc.seed)
	if err != nil || sc.restart <= 0 {
		return prof, err
	}
	at := int64(sc.restart)
	prof.marks = append(prof.marks, prof.at(at))
	prof.marks[len(prof.marks)-1].at = at
	return prof, nil
}

// buildPolicies turns the policy names into policies, once the flags have
// set the bulkheads' sizes.
func (sc *scenario) buildPolicies() error {
	sc.policies = sc.policies[:0]
	for _, kind := range sc.kinds {
		p, err := newPolicy(kind, sc)
		if err != nil {
			return err
		}
		sc.policies = append(sc.policies, p)
	}
	return nil
}

// toReal scales the scenario down for a real-time run of about 30 seconds on
// loopback: fewer, slower servers, so that a laptop sends the load without
// noticing, and a shorter window, so that the limits have time to move. The
// single scenario and a fleet scenario (fleet, fleet20, fleet50), one fleet of 8
// clients, run as a user meets them: 20 s at a steady capacity, with the
// library's window, every second of it counted. The fanin scenario is 200 clients against
// the same 20 workers, LossDelay beside LossDelay without limits below one call in flight.
func (sc *scenario) toReal() {
	sc.real = true
	sc.duration = 30 * time.Second
	sc.window = 250 * time.Millisecond
	sc.serviceMean = 20 * time.Millisecond
	sc.timeout = 100 * time.Millisecond
	if sc.clients == 1 && sc.name != "single" {
		scale := func(n int) int { return max(1, n*2/5) }
		sc.servers, sc.low, sc.high = scale(sc.servers), scale(sc.low), scale(sc.high)
		return
	}
	// 20 workers, and the callers' timeout three times the mean service time. A fleet is 8
	// clients, each starting at the initial limit of 20, so that the limits start at 8 times
	// the capacity. The low bulkhead is the workers split evenly, the high one three times
	// that.
	sc.profile, sc.duration, sc.window = "flat", 20*time.Second, time.Second // the library's default window
	sc.servers, sc.timeout = 20, 60*time.Millisecond
	switch {
	case sc.name == "fanin":
		sc.clients, sc.kinds = faninRealClients, faninRealKinds
	case sc.clients > 1:
		sc.clients = 8
	}
	sc.low, sc.high = max(1, sc.servers/sc.clients), 3*sc.servers/sc.clients
	sc.fitBulkheads()
}

// closedUsers is how many closed-loop users offer the scenario's load: each
// user sends at most one call per think time plus service time.
func (sc *scenario) closedUsers() int {
	perUser := float64(sc.think+sc.serviceMean) / float64(sc.serviceMean)
	return max(1, int(math.Round(sc.load*float64(sc.servers)*perUser)))
}

// capacityRate is how many calls per second n servers complete.
func (sc *scenario) capacityRate(n int) float64 {
	return float64(n) / sc.serviceMean.Seconds()
}

// offeredRate is the open-loop arrival rate, over all clients, in calls per second.
func (sc *scenario) offeredRate() float64 {
	return sc.load * sc.capacityRate(sc.servers)
}

// offeredLimit is the offered rate where it bounds what could be answered: in
// open loop; a closed loop's rate follows its answers, so there it is +Inf.
func (sc *scenario) offeredLimit() float64 {
	if sc.users > 0 {
		return math.Inf(1)
	}
	return sc.offeredRate()
}

// sourceCount is how many sources send calls: each closed-loop user, or in open loop one
// stream a client, with classes or without.
func (sc *scenario) sourceCount() int {
	if sc.users > 0 {
		return sc.users
	}
	return sc.clients
}
