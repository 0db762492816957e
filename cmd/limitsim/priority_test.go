package main

import (
	"bytes"
	"fmt"
	"math"
	"testing"
)

// The targets for the priority scenario, with every algorithm at the library's
// default bounds: the critical class's goodput at least 99% of what it offered throughout, and
// the total at least 95% of the capacity. Throughout is each phase of the profile: before,
// during and after the halving, so that the healthy thirds cannot hide the halved one. The
// worst single window is not held to it: in the window in which the capacity halves, the
// limit is still the one that filled the whole capacity, critical calls queue behind it and
// some time out before the limiter moves once the window ends; the test holds it to 97%.
const (
	criticalTarget       = 0.99
	criticalWindowTarget = 0.97
	priorityTarget       = 0.95
)

// With critical calls at 60% of the capacity (-critical 0.6), while the capacity is halved
// they alone ask for 120% of it: the critical class gets at least 95% of what the halved
// capacity allows, 79% of what it offers, and the sheddable class at most 2% of its own.
const (
	halvedCriticalTarget  = 0.79
	halvedSheddableTarget = 0.02
)

// totalMisses lists the algorithms whose total goodput, at the library's default bounds,
// the test does not hold to priorityTarget, with why: their limit grows from InitialLimit 20
// by about one slot a window, and they miss it without classes too (the step scenario, same
// profile and load, seed 1: Gradient2 91.7%, AIMD 91.1% of the capacity).
var totalMisses = map[string]bool{"gradient2": true, "aimd": true}

var adaptiveKinds = "gradient2,aimd,vegas,lossdelay"

// priorityRun simulates the priority scenario with the flags given on top.
func priorityRun(t *testing.T, args ...string) ([]*result, profile, *scenario) {
	t.Helper()
	if raceDetector {
		t.Skip("millions of simulated calls take minutes under the race detector; make test runs these without it")
	}
	opts, err := parseFlags(append([]string{"-scenario", "priority"}, args...), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	prof, err := opts.sc.newProfile()
	if err != nil {
		t.Fatal(err)
	}
	results, err := simulateAll(&opts.sc, prof)
	if err != nil {
		t.Fatal(err)
	}
	return results, prof, &opts.sc
}

// priorityMisses lists the targets an adaptive policy's run of the priority scenario misses.
func priorityMisses(r *result, prof profile, sc *scenario) []string {
	var misses []string
	critical := r.classes[0]
	for i, share := range critical.phases(prof, int64(sc.window)) {
		if share < criticalTarget {
			misses = append(misses, fmt.Sprintf("critical goodput %.1f%% of offered in phase %d, want at least %.0f%%", 100*share, i+1, 100*criticalTarget))
		}
	}
	if worst, at := critical.worstWindow(); worst < criticalWindowTarget {
		misses = append(misses, fmt.Sprintf("critical goodput %.1f%% of offered in window %d, want at least %.0f%%", 100*worst, at+1, 100*criticalWindowTarget))
	}
	return append(misses, totalMiss(r, prof, sc)...)
}

// totalMiss is the total's target, where the policy is held to it.
func totalMiss(r *result, prof profile, sc *scenario) []string {
	capacity := prof.capacityCalls(int64(sc.duration), sc.serviceMean.Seconds(), sc.offeredLimit())
	if got := float64(r.total().completed) / capacity; got < priorityTarget && !totalMisses[r.policy.kind] {
		return []string{fmt.Sprintf("goodput %.1f%% of the capacity, want at least %.0f%%", 100*got, 100*priorityTarget)}
	}
	return nil
}

func TestPriorityKeepsTheCriticalClassWithEveryAlgorithm(t *testing.T) {
	results, prof, sc := priorityRun(t, "-policies", adaptiveKinds)
	for _, r := range results {
		t.Run(r.policy.kind, func(t *testing.T) {
			for _, miss := range priorityMisses(r, prof, sc) {
				t.Error(miss)
			}
			if r.leaked != 0 {
				t.Errorf("%d slots still held after the run drained", r.leaked)
			}
		})
	}
}

// When the critical calls alone ask for more than the halved capacity, the sheddable ones are
// shed first: nearly all of them while it is halved, and the critical ones get what is left.
// After the halving the critical calls are held to criticalTarget. Before it they are not:
// the limit grows from the library's InitialLimit of 20, about a slot a window for AIMD,
// under critical calls that ask for 30 slots (measured with seed 1: 92.4-97.6% of them
// answered in that phase).
func TestPriorityShedsTheSheddableClassFirst(t *testing.T) {
	results, prof, sc := priorityRun(t, "-policies", adaptiveKinds, "-critical", "0.6")
	for _, r := range results {
		t.Run(r.policy.kind, func(t *testing.T) {
			critical, sheddable := r.classes[0].phases(prof, int64(sc.window)), r.classes[1].phases(prof, int64(sc.window))
			if critical[1] < halvedCriticalTarget {
				t.Errorf("critical goodput %.1f%% of offered while the capacity is halved, want at least %.0f%%", 100*critical[1], 100*halvedCriticalTarget)
			}
			if sheddable[1] > halvedSheddableTarget {
				t.Errorf("sheddable goodput %.1f%% of offered while the capacity is halved, want at most %.0f%%", 100*sheddable[1], 100*halvedSheddableTarget)
			}
			if critical[2] < criticalTarget {
				t.Errorf("critical goodput %.1f%% of offered after the halving, want at least %.0f%%", 100*critical[2], 100*criticalTarget)
			}
			if r.leaked != 0 {
				t.Errorf("%d slots still held after the run drained", r.leaked)
			}
		})
	}
}

// Without a reserve, what the critical calls lend is all the sheddable ones get, and the
// critical calls turned away take it back: they still meet their targets. The fixed shares
// of the limit that the classes were before answered 18-50% of them in a phase.
func TestPriorityWithoutAReserveTakesTheSlotsBack(t *testing.T) {
	results, prof, sc := priorityRun(t, "-policies", adaptiveKinds, "-reserve", "0")
	for _, r := range results {
		for i, share := range r.classes[0].phases(prof, int64(sc.window)) {
			if share < criticalTarget {
				t.Errorf("%s: critical goodput %.1f%% of offered in phase %d without a reserve, want at least %.0f%%", r.policy.label, 100*share, i+1, 100*criticalTarget)
			}
		}
	}
}

// A bulkhead has no classes: it rejects a critical call as often as a sheddable one.
func TestPriorityBulkheadsTreatTheClassesAlike(t *testing.T) {
	results, _, _ := priorityRun(t, "-policies", "low,high")
	for _, r := range results {
		share := func(c classStats) float64 { return float64(c.rejected) / float64(c.offered) }
		if critical, sheddable := share(r.classes[0]), share(r.classes[1]); math.Abs(critical-sheddable) > 0.01 {
			t.Errorf("%s: rejected %.1f%% of the critical calls and %.1f%% of the sheddable ones, want the same", r.policy.label, 100*critical, 100*sheddable)
		}
	}
}

func TestClassStatsCountACallInTheWindowItArrivedIn(t *testing.T) {
	var c classStats
	for w := range 6 {
		for range 10 {
			c.offer(w)
		}
	}
	for w := range 6 {
		for i := range 10 {
			c.answer(w, !(w == 4 && i < 3)) // window 4: 3 timeouts
		}
	}
	if worst, at := c.worstWindow(); worst != 0.7 || at != 4 {
		t.Errorf("worst window %g at %d, want 0.7 at 4", worst, at)
	}
	prof := profile{marks: []capacityStep{{at: 3e9}}}
	got := c.phases(prof, 1e9)
	if len(got) != 2 || got[0] != 1 || math.Abs(got[1]-27.0/30) > 1e-12 {
		t.Errorf("phases %v, want [1 0.9]", got)
	}
	if c.offered != 60 || c.completed != 57 || c.timeouts != 3 {
		t.Errorf("offered %d, completed %d, timeouts %d, want 60, 57, 3", c.offered, c.completed, c.timeouts)
	}
}
