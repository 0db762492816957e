package main

import (
	"bytes"
	"math"
	"testing"
	"time"
)

// timelineOf builds a one-second-window timeline from per-window values.
func timelineOf(inFlight []int, timeouts []int64) []sample {
	var tl []sample
	for i := range inFlight {
		tl = append(tl, sample{at: int64(i+1) * int64(time.Second), meanIn: float64(inFlight[i]), answered: 1000, timeouts: timeouts[i]})
	}
	return tl
}

func TestConvergenceCountsWindowsUntilInFlightAndTimeoutsStayLow(t *testing.T) {
	var prof profile
	prof.add(0, 100, false)
	end := int64(10 * time.Second)
	// 120 is at the bound; 121 is over it; 10 timeouts of 1010 calls is just under 1%.
	tl := timelineOf([]int{400, 300, 121, 120, 90, 100, 130, 100, 110, 100}, []int64{500, 50, 0, 0, 0, 0, 0, 10, 9, 0})
	if got := convergence(tl, prof, end); got != 7 {
		t.Errorf("got %d, want 7 (the window over 1.2× the capacity is the 7th)", got)
	}
	tl[9].timeouts = 11
	if got := convergence(tl, prof, end); got != never {
		t.Errorf("last window timing out: got %d, want never", got)
	}
	if got := convergence(tl, prof, int64(6*time.Second)); got != 3 {
		t.Errorf("up to the 6th window: got %d, want 3", got)
	}
}

func TestPoisoningIsTheWorstBaselineAgainstTheTrueLatency(t *testing.T) {
	sc := &scenario{serviceMean: 10 * time.Millisecond, duration: 4 * time.Second}
	prof := changeProfile(50, int64(3*time.Second), capacityStep{slow: 10}, true) // 10× slower in (1 s, 2 s]
	tl := []sample{
		{at: int64(time.Second), baseline: 11e6},
		{at: int64(2 * time.Second), baseline: 50e6}, // 0.5 of the slow dependency's 100 ms
		{at: int64(3 * time.Second), baseline: 30e6}, // 3 of the normal 10 ms
		{at: int64(4 * time.Second)},                 // no baseline: left out
	}
	if got := poisoning(tl, prof, sc); math.Abs(got-3) > 1e-9 {
		t.Errorf("got %g, want 3", got)
	}
	if got := poisoning(tl[3:], prof, sc); !math.IsNaN(got) {
		t.Errorf("no baseline: got %g, want NaN", got)
	}
}

func TestLimitCVAndRecovery(t *testing.T) {
	var tl []sample
	limits := []int{10, 20, 30, 10, 30, 10, 30}
	goodput := []float64{100, 100, 100, 0, 50, 96, 100}
	for i := range limits {
		tl = append(tl, sample{at: int64(i+1) * int64(time.Second), limit: limits[i], exact: float64(limits[i]), goodput: goodput[i]})
	}
	// Windows 4 to 7 hold 10, 30, 10, 30: mean 20, deviation 10.
	if got := limitCV(tl, int64(3*time.Second), int64(7*time.Second)); math.Abs(got-0.5) > 1e-9 {
		t.Errorf("CV %g, want 0.5", got)
	}
	var prof profile
	prof.add(0, 10, false)
	prof.add(int64(3*time.Second), 5, true)
	prof.add(int64(4*time.Second), 10, true)
	// Before: 100/s; after the incident ends at 4 s, 50 then 96: back in the second window.
	if got := recovery(tl, prof); got != 2 {
		t.Errorf("recovery %d, want 2", got)
	}
	tl[5].goodput, tl[6].goodput = 90, 90
	if got := recovery(tl, prof); got != never {
		t.Errorf("recovery %d, want never", got)
	}
	var flat profile
	flat.add(0, 10, false)
	if got := recovery(tl, flat); got != notApplicable {
		t.Errorf("no incident: %d, want n/a", got)
	}
}

// The lossy scenario loses its share of the calls whatever the policy, and the
// neighbour takes its share of the servers: with a fixed bulkhead far below the
// capacity, timeouts are the lost calls, and the neighbour's calls are not the
// clients'.
func TestLostCallsAndNeighbour(t *testing.T) {
	opts, err := parseFlags([]string{"-scenario", "lossy", "-lost", "0.05", "-duration", "20s", "-policies", "low"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	prof, _ := newProfile(opts.sc.profile, opts.sc.servers, opts.sc.duration, opts.sc.seed)
	r, err := simulate(&opts.sc, prof, opts.sc.policies[0])
	if err != nil {
		t.Fatal(err)
	}
	total := r.total()
	if share := float64(total.timeouts) / float64(total.offered-total.rejected); share < 0.04 || share > 0.06 {
		t.Errorf("timeouts %.3f of admitted calls, want about 0.05", share)
	}

	opts, err = parseFlags([]string{"-scenario", "neighbour", "-duration", "30s", "-policies", "none", "-load", "0.3"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	prof, _ = newProfile(opts.sc.profile, opts.sc.servers, opts.sc.duration, opts.sc.seed)
	r, err = simulate(&opts.sc, prof, opts.sc.policies[0])
	if err != nil {
		t.Fatal(err)
	}
	// 30% of the capacity offered, 60% taken by the neighbour for the middle third: 90% busy
	// then, so calls queue but all are answered; the neighbour's calls are not counted.
	total = r.total()
	if offered := float64(total.offered) / 30; offered < 1400 || offered > 1600 {
		t.Errorf("offered %.0f/s, want about 1500 (the neighbour's calls counted?)", offered)
	}
	var before, during float64
	for _, s := range r.timeline {
		switch {
		case s.at > int64(2*time.Second) && s.at <= int64(10*time.Second):
			before = max(before, float64(s.p99))
		case s.at > int64(12*time.Second) && s.at <= int64(20*time.Second):
			during = max(during, float64(s.p99))
		}
	}
	if during <= before {
		t.Errorf("p99 %.0f ns with the neighbour, not above %.0f ns without: its calls do not queue", during, before)
	}
}
