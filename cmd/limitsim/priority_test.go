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
// worst single window is not held to it but to 96.5%: in the window in which the capacity
// halves, the limit is still the one that filled the whole capacity, critical calls queue
// behind it and some time out before the limiter moves once the window ends; and in the
// first windows the limit may lie below what the critical calls' bursts ask for by
// themselves (AIMD with seed 1: a timeout in window 1 takes its limit from 20 to 18, whence it
// regrows a slot a window, and in windows 3 and 4 the critical calls alone, 12.5 slots on
// average, exceed it in 1.2% and 1.5% of their calls).
const (
	criticalTarget       = 0.99
	criticalWindowTarget = 0.965
	priorityTarget       = 0.95
)

// With critical calls at 60% of the capacity (-critical 0.6), while the capacity is halved
// they alone ask for 120% of it: the critical class gets at least 95% of what the halved
// capacity allows, 79% of what it offers, and the sheddable class at most 2% of its own.
const (
	halvedCriticalTarget  = 0.79
	halvedSheddableTarget = 0.02
)

// totalFloors are the totals, shares of the capacity, to which the test holds the algorithms
// that the library's default bounds keep from priorityTarget, by -critical; measured with
// seed 1 and rounded down to the percent, so that a change that loses capacity fails.
//   - Gradient2 and AIMD regrow their limit from InitialLimit 20, and after the halving, by
//     about a slot a window, and miss the target without classes too (the step scenario,
//     same profile, load, seed and so the same calls: 91.7% and 91.1%). With the never-lent
//     parts of the reserves on top of the algorithm's limit, the classes cost them no more
//     than what calls turned away take back (TestPriorityWastesNothingWithEveryAlgorithm has
//     the figures): Gradient2 got 90.7% and 89.9%, AIMD 91.1% and 89.7%.
//   - With -critical 0.6 the critical calls alone ask for 30 slots of a limit that starts at
//     22, so the sheddable ones are shut until the limit has grown past the critical calls'
//     bursts, as the priorities ask, and the slots the bursts leave idle in between are lost.
var totalFloors = map[float64]map[string]float64{
	defaultCritical: {"gradient2": 0.90, "aimd": 0.91},
	0.6:             {"gradient2": 0.89, "aimd": 0.89},
}

// startCriticalFloor is what the test holds the critical calls to before the halving with
// -critical 0.6, rather than criticalTarget: they ask for 30 slots of a limit that starts at
// 20, and the first windows turn a third of them away whatever the classes do (measured with
// seed 1: 92.2-97.5% of them answered in that phase).
const startCriticalFloor = 0.92

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

// totalMiss is the total's target, or the policy's floor where totalFloors has one.
func totalMiss(r *result, prof profile, sc *scenario) []string {
	capacity := prof.capacityCalls(int64(sc.duration), sc.serviceMean.Seconds(), sc.offeredLimit())
	want := priorityTarget
	if floor, ok := totalFloors[sc.critical][r.policy.kind]; ok {
		want = floor
	}
	if got := float64(r.total().completed) / capacity; got < want {
		return []string{fmt.Sprintf("goodput %.1f%% of the capacity, want at least %.0f%%", 100*got, 100*want)}
	}
	return nil
}

// wasteTarget is how far, in shares of the capacity, an algorithm's total in the priority
// scenario may lie below its total without classes: the step scenario, whose profile, load
// and seed are the same (issue 36: the classes waste nothing with any algorithm).
const wasteTarget = 0.02

// Each algorithm's total with classes lies within wasteTarget of its total without them, at
// both critical shares. The priority scenario sends the step scenario's very calls, each
// given its class from a stream of its own, so the difference is what the classes cost.
// Measured with seed 1, the classes cost Gradient2, AIMD, Vegas and LossDelay 1.0, 0.0, 0.8
// and 0.2 points at -critical 0.25, and 1.8, 1.4, 1.2 and 1.0 at -critical 0.6; over seeds
// 1-6, Gradient2 1.8-2.0 at -critical 0.6, and AIMD from 1.8 above to 3.4 below, as its cuts
// on a service time over the timeout fall in other windows.
//
// Before the never-lent parts of the reserves went on top of the algorithm's limit, they sat
// idle inside it: Gradient2 lost 3.4 and 5.0 points, AIMD 11.2 and 2.5, Vegas 1.4 and 2.8,
// LossDelay 0.6 and 2.2 (at -critical 0.25 and 0.6, with each class's calls then drawn from a
// stream of their own). Before calls turned away took back at most needFactor times what
// their class lacked in the window before, at -critical 0.6 the critical calls, tens to
// hundreds turned away in each window while the limit grew past their 30 ± 5.5 slots, took
// every lent slot back within the window, and the sheddable class was shut for most of it
// while the critical calls left part of the limit idle: Gradient2 lost 2.6 points, AIMD 2.4.
func TestPriorityWastesNothingWithEveryAlgorithm(t *testing.T) {
	if raceDetector {
		t.Skip("millions of simulated calls take minutes under the race detector; make test runs these without it")
	}
	totals := func(args ...string) map[string]float64 {
		opts, err := parseFlags(append(args, "-policies", adaptiveKinds), &bytes.Buffer{})
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
		sc := &opts.sc
		capacity := prof.capacityCalls(int64(sc.duration), sc.serviceMean.Seconds(), sc.offeredLimit())
		out := map[string]float64{}
		for _, r := range results {
			out[r.policy.kind] = float64(r.total().completed) / capacity
		}
		return out
	}
	without := totals("-scenario", "step")
	for _, critical := range []float64{defaultCritical, 0.6} {
		with := totals("-scenario", "priority", "-critical", fmt.Sprint(critical))
		for kind, want := range without {
			if got := with[kind]; got < want-wasteTarget-1e-9 {
				t.Errorf("-critical %g, %s: %.1f%% of the capacity, %.1f points below %.1f%% without classes, want at most %.1f",
					critical, kind, 100*got, 100*(want-got), 100*want, 100*wasteTarget)
			}
		}
	}
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
// After the halving the critical calls are held to criticalTarget, before it to
// startCriticalFloor, and the total to its target or the policy's floor (totalMiss).
func TestPriorityShedsTheSheddableClassFirst(t *testing.T) {
	results, prof, sc := priorityRun(t, "-policies", adaptiveKinds, "-critical", "0.6")
	for _, r := range results {
		t.Run(r.policy.kind, func(t *testing.T) {
			critical, sheddable := r.classes[0].phases(prof, int64(sc.window)), r.classes[1].phases(prof, int64(sc.window))
			if critical[0] < startCriticalFloor {
				t.Errorf("critical goodput %.1f%% of offered before the halving, want at least %.0f%%", 100*critical[0], 100*startCriticalFloor)
			}
			if critical[1] < halvedCriticalTarget {
				t.Errorf("critical goodput %.1f%% of offered while the capacity is halved, want at least %.0f%%", 100*critical[1], 100*halvedCriticalTarget)
			}
			if sheddable[1] > halvedSheddableTarget {
				t.Errorf("sheddable goodput %.1f%% of offered while the capacity is halved, want at most %.0f%%", 100*sheddable[1], 100*halvedSheddableTarget)
			}
			if critical[2] < criticalTarget {
				t.Errorf("critical goodput %.1f%% of offered after the halving, want at least %.0f%%", 100*critical[2], 100*criticalTarget)
			}
			for _, miss := range totalMiss(r, prof, sc) {
				t.Error(miss)
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

// The priority scenario sends the step scenario's calls, so that comparing the two measures
// the classes alone: the bulkheads and no limit, which treat every call alike, answer,
// reject and time out the very same calls in both, and the critical calls are their share of
// them.
func TestPriorityOffersTheStepScenariosCalls(t *testing.T) {
	run := func(args ...string) []*result {
		opts, err := parseFlags(append(args, "-policies", "low,high,none"), &bytes.Buffer{})
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
		return results
	}
	without := run("-scenario", "step")
	with := run("-scenario", "priority", "-critical", "0.6")
	for i, r := range with {
		if got, want := r.total(), without[i].total(); got != want {
			t.Errorf("%s: %+v with classes, want %+v as without", r.policy.label, got, want)
		}
		critical := float64(r.classes[0].offered) / float64(r.total().offered)
		if math.Abs(critical-0.3) > 0.005 || r.classes[0].offered+r.classes[1].offered != r.total().offered {
			t.Errorf("%s: %d critical and %d sheddable calls of %d, want 30%% critical and all of them", r.policy.label, r.classes[0].offered, r.classes[1].offered, r.total().offered)
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
