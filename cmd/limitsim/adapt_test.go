package main

import (
	"math"
	"slices"
	"testing"
)

func TestAdaptWindowsCountsUntilTheLimitStaysInBand(t *testing.T) {
	const w = 10
	// Capacity 40 until 50, then 20. The band for 20 is 15..40.
	limits := []int{40, 40, 40, 40, 40, 60, 50, 39, 45, 38, 30, 25, 22, 21, 20, 20, 20}
	var timeline []sample
	for i, l := range limits {
		timeline = append(timeline, sample{at: int64(i+1) * w, limit: l, exact: float64(l)})
	}
	marks := []capacityStep{{at: 50, servers: 20}}
	// In band from the window ending at 100 (38); the 45 at 90 broke the first run.
	if got := adaptWindows(timeline, marks, w, 170); !slices.Equal(got, []int{5}) {
		t.Errorf("got %v, want [5]", got)
	}
	if got := adaptWindows(timeline[:12], marks, w, 120); !slices.Equal(got, []int{adaptNever}) {
		t.Errorf("too short a run: got %v, want never", got)
	}
	inf := math.Inf(1)
	unlimitedLine := []sample{{at: 60, limit: unlimited, exact: inf}, {at: 70, limit: unlimited, exact: inf}}
	if got := adaptWindows(unlimitedLine, marks, w, 70); got[0] != adaptNever {
		t.Errorf("no limit adapted: %v", got)
	}
	// A fleet of paced limiters: each limit 1, their shares 0.02 each, 25 in all.
	paced := []sample{}
	for i := range 6 {
		paced = append(paced, sample{at: int64(60 + 10*i), limit: 1000, exact: 25})
	}
	if got := adaptWindows(paced, marks, w, 110); got[0] != 1 {
		t.Errorf("paced fleet in band from its first window: got %v, want [1]", got)
	}
}

func TestJainFairness(t *testing.T) {
	equal := result{clients: []clientStats{{completed: 5}, {completed: 5}, {completed: 5}, {completed: 5}}}
	if got := equal.jain(); got != 1 {
		t.Errorf("equal shares: %g", got)
	}
	oneTakesAll := result{clients: []clientStats{{completed: 8}, {}, {}, {}}}
	if got := oneTakesAll.jain(); got != 0.25 {
		t.Errorf("one client takes all: %g, want 1/4", got)
	}
}
