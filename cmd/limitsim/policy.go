package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"

	"github.com/resilience4cata/adaptivelimit"
)

// gate decides whether a client sends a call: the library's limiter, or a
// plain counter for the fixed bulkheads and for no limit at all.
type gate interface {
	acquire(class int32) (adaptivelimit.Permit, bool) // class: an index in the scenario's classes, 0 without
	release(p *adaptivelimit.Permit, err error)
	limit() int // unlimited for no limit
	inFlight() int
	// learned reads, from one snapshot, the latency in ns the limiter takes as normal (0 for
	// none), the windows so far that began or ended a probe of the no-load latency, and the
	// limit as a real number: below 1 while the limiter paces its calls.
	learned() (baseline int64, probes uint64, exact float64)
}

const unlimited = math.MaxInt

// policyKind names the policies, in the order the report lists them.
var policyKinds = []string{"gradient2", "aimd", "vegas", "lossdelay", "low", "high", "none"}

// policy is one way of limiting a client's calls, with the label the table
// and the charts show.
type policy struct {
	kind  string
	label string
	fixed int // the bulkhead's size for low and high
}

func newPolicy(kind string, sc *scenario) (policy, error) {
	switch kind {
	case "gradient2":
		return policy{kind: kind, label: "Gradient2"}, nil
	case "aimd":
		return policy{kind: kind, label: "AIMD"}, nil
	case "vegas":
		return policy{kind: kind, label: "Vegas"}, nil
	case "lossdelay":
		return policy{kind: kind, label: "LossDelay"}, nil
	case unitFloorKind:
		return policy{kind: kind, label: "LossDelay floor 1"}, nil
	case "low":
		return policy{kind: kind, label: fmt.Sprintf("fixed %d (low)", sc.low), fixed: sc.low}, nil
	case "high":
		return policy{kind: kind, label: fmt.Sprintf("fixed %d (high)", sc.high), fixed: sc.high}, nil
	case "none":
		return policy{kind: kind, label: "no limit", fixed: unlimited}, nil
	}
	return policy{}, fmt.Errorf("unknown policy %q (want some of %s,%s)", kind, strings.Join(policyKinds, ","), unitFloorKind)
}

func (p policy) adaptive() bool { return p.algorithm() != 0 }

// algorithm is the library's algorithm of an adaptive policy, 0 for the others.
func (p policy) algorithm() adaptivelimit.Algorithm {
	switch p.kind {
	case "gradient2":
		return adaptivelimit.Gradient2
	case "aimd":
		return adaptivelimit.AIMD
	case "vegas":
		return adaptivelimit.Vegas
	case "lossdelay", unitFloorKind:
		return adaptivelimit.LossDelay
	}
	return 0
}

// newGate builds one client's gate. Limiters read clock: in a simulation a
// ManualClock that is set to each event's instant before a limiter is called,
// in the real mode the system's. Each client's limiter draws from its own PCG
// stream of the run's seed, so that a run does not depend on the schedule.
func (p policy) newGate(clock adaptivelimit.Clock, client int, sc *scenario) (gate, error) {
	if !p.adaptive() {
		return &counterGate{max: p.fixed}, nil
	}
	c := sc.limits.config(adaptivelimit.Config{
		Name:      fmt.Sprintf("%s-%d", p.kind, client),
		Algorithm: p.algorithm(),
		Window:    sc.window,
		Clock:     clock,
		Random:    rand.New(rand.NewPCG(sc.seed, streamFirstLimiter+uint64(client))).Float64,
		Classes:   libraryClasses(sc.classes),
	})
	if p.kind == unitFloorKind {
		unitFloor(&c)
	}
	l, err := adaptivelimit.New(c)
	if err != nil {
		return nil, err
	}
	return limiterGate{l: l, classes: classNames(sc.classes)}, nil
}

// limits are the flags -initial, -min, -max and -queue: the adaptive limiters'
// bounds and queue size, 0 for the library's default.
type limits struct{ initial, min, max, queue int }

func (l limits) config(c adaptivelimit.Config) adaptivelimit.Config {
	c.InitialLimit, c.MinLimit, c.MaxLimit, c.QueueSize = l.initial, l.min, l.max, l.queue
	return c
}

// check lets the library judge the values, so that the flags take exactly what
// a Config takes.
func (l limits) check() error {
	if l.initial < 0 || l.min < 0 || l.max < 0 || l.queue < 0 {
		return fmt.Errorf("-initial %d, -min %d, -max %d, -queue %d: want 0 (the default) or more", l.initial, l.min, l.max, l.queue)
	}
	if _, err := adaptivelimit.New(l.config(adaptivelimit.Config{})); err != nil {
		return fmt.Errorf("-initial, -min, -max, -queue: %w", err)
	}
	return nil
}

// resolved returns the InitialLimit and MinLimit that a limiter with these bounds has: the
// library's defaults where unset. The bounds are checked.
func (l limits) resolved() (initial, minLimit int) {
	lim, err := adaptivelimit.New(l.config(adaptivelimit.Config{}))
	if err != nil {
		panic(err)
	}
	s := lim.Snapshot()
	return s.Limit, s.MinLimit
}

// limiterGate is an adaptive policy's limiter, with the names of its classes where it has any.
type limiterGate struct {
	l       *adaptivelimit.Limiter
	classes []string
}

func (g limiterGate) acquire(class int32) (adaptivelimit.Permit, bool) {
	if g.classes == nil {
		p, err := g.l.Acquire()
		return p.Move(), err == nil
	}
	p, err := g.l.AcquireClass(g.classes[class])
	return p.Move(), err == nil
}

func (g limiterGate) release(p *adaptivelimit.Permit, err error) { p.Done(err) }
func (g limiterGate) limit() int                                 { return g.l.Limit() }
func (g limiterGate) inFlight() int                              { return g.l.InFlight() }

func (g limiterGate) learned() (baseline int64, probes uint64, exact float64) {
	s := g.l.Snapshot()
	kept, up, down := s.Decisions(adaptivelimit.CauseProbe)
	return int64(s.LongLatency), kept + up + down, s.ExactLimit
}

// counterGate is a fixed bulkhead: at most max calls at once. It is atomic
// because the real mode calls it from many goroutines.
type counterGate struct {
	max int
	n   atomic.Int64
}

// acquire treats every class alike: a bulkhead has no classes.
func (g *counterGate) acquire(int32) (adaptivelimit.Permit, bool) {
	for {
		n := g.n.Load()
		if n >= int64(g.max) {
			return adaptivelimit.Permit{}, false
		}
		if g.n.CompareAndSwap(n, n+1) {
			return adaptivelimit.Permit{}, true
		}
	}
}

func (g *counterGate) release(*adaptivelimit.Permit, error) { g.n.Add(-1) }
func (g *counterGate) limit() int                           { return g.max }
func (g *counterGate) inFlight() int                        { return int(g.n.Load()) }
func (g *counterGate) learned() (int64, uint64, float64)    { return 0, 0, float64(g.max) }
