package main

import (
	"bytes"
	"fmt"
	"math"
	"testing"
)

// The targets for the priority scenario, with every algorithm: the critical class's
// goodput at least 99% of what it offered throughout, and the total at least 95% of the
// capacity. Throughout is each phase of the profile: before, during and after the halving, so
// that the healthy thirds cannot hide the halved one. The worst single window is not held to
// it: in the window in which the capacity halves, the limit is still the one that filled the
// whole capacity, critical calls queue behind it and some time out before the limiter moves
// once the window ends (measured with seed 1: Gradient2 98.1%, AIMD 99.2%, Vegas 99.3%,
// LossDelay 98.8%); the test holds it to 97%.
const (
	criticalTarget       = 0.99
	criticalWindowTarget = 0.97
	priorityTarget       = 0.95
)

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
	capacity := prof.capacityCalls(int64(sc.duration), sc.serviceMean.Seconds(), sc.offeredLimit())
	if got := float64(r.total().completed) / capacity; got < priorityTarget {
		misses = append(misses, fmt.Sprintf("goodput %.1f%% of the capacity, want at least %.0f%%", 100*got, 100*priorityTarget))
	}
	return misses
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

// Without a reserve the classes are one shared pool, and the critical calls are shed with the
// sheddable ones: measured with seed 1, 18-50% of them answered in a phase. The targets above
// can so fail, and it is the reserve that meets them.
func TestPriorityWithoutAReserveShedsTheCriticalClass(t *testing.T) {
	results, prof, sc := priorityRun(t, "-policies", adaptiveKinds, "-reserve", "0")
	for _, r := range results {
		critical := r.classes[0]
		if got := float64(critical.completed) / float64(critical.offered); got > 0.6 {
			t.Errorf("%s: critical goodput %.1f%% of offered without a reserve, want the shared pool's lot, under 60%%", r.policy.label, 100*got)
		}
		if len(priorityMisses(r, prof, sc)) == 0 {
			t.Errorf("%s: meets the priority targets without a reserve", r.policy.label)
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
