package main

import "math"

// The measures the scenario tests hold an algorithm to, besides goodput and
// latency. Each is computed from a run's timeline, one sample a window.
const (
	// A fleet has converged once the calls it holds in flight stay at or under
	// convergedInFlight times the servers left to it, with under
	// convergedTimeouts of a window's calls timing out.
	convergedInFlight = 1.2
	convergedTimeouts = 0.01
	// The steady state starts this many windows into a run: the limit's
	// coefficient of variation is taken from there to the first change.
	steadyFrom = 20
	// Goodput is back once a window reaches recoveredShare of its mean over
	// the recoveryBase windows before the first change.
	recoveredShare = 0.95
	recoveryBase   = 10
)

// never stands for a measure that was never reached, and notApplicable for one
// that does not apply to a policy or a profile.
const (
	never         = -1
	notApplicable = -2
)

// verdict is what the judge measured of one run.
type verdict struct {
	convergence int     // windows until converged, or never
	poisoning   float64 // the baseline against the true no-load latency, at its worst; NaN where there is no baseline
	limitCV     float64 // the summed limit's standard deviation over its mean in steady state; NaN for no limit
	recovery    int     // windows after the incident ends until goodput is back, or never, or notApplicable
}

func judge(r *result, prof profile, sc *scenario) verdict {
	firstChange := int64(sc.duration)
	if len(prof.marks) > 0 {
		firstChange = prof.marks[0].at
	}
	return verdict{
		convergence: convergence(r.timeline, prof, firstChange),
		poisoning:   poisoning(r.timeline, prof, sc),
		limitCV:     limitCV(r.timeline, int64(steadyFrom)*int64(sc.window), firstChange),
		recovery:    recovery(r.timeline, prof),
	}
}

// convergence is how many windows pass from the start until the clients' calls
// in flight, averaged over each window, stay at or under convergedInFlight times the servers left to them,
// with under convergedTimeouts of the calls answered in each window timing out,
// up to the first change.
func convergence(timeline []sample, prof profile, until int64) int {
	first := 0
	for i, s := range timeline {
		if s.at > until {
			break
		}
		slots := prof.at(s.at - 1).slots()
		inFlight := s.meanIn
		if inFlight < 0 {
			inFlight = float64(s.inFlight)
		}
		tooMany := inFlight > convergedInFlight*slots
		timingOut := s.timeouts > 0 && float64(s.timeouts) >= convergedTimeouts*float64(s.answered+s.timeouts)
		if tooMany || timingOut {
			first = i + 1
		}
	}
	if first >= len(timeline) || timeline[first].at > until {
		return never
	}
	return first
}

// poisoning is the worst ratio, over the windows, of the latency the clients'
// limiters take as normal to the dependency's true no-load latency in that
// window (the mean service time, slowdown included). 1 is right; above it, the
// limiter takes queueing for normal.
func poisoning(timeline []sample, prof profile, sc *scenario) float64 {
	worst := math.NaN()
	for _, s := range timeline {
		if s.baseline == 0 {
			continue
		}
		truth := float64(sc.serviceMean) * prof.at(s.at-1).slow
		if ratio := s.baseline / truth; !(ratio <= worst) {
			worst = ratio
		}
	}
	return worst
}

// limitCV is the coefficient of variation of the summed limit over the
// windows that end in (from, until].
func limitCV(timeline []sample, from, until int64) float64 {
	var n, sum, squares float64
	for _, s := range timeline {
		if s.at <= from || s.at > until {
			continue
		}
		if s.limit == unlimited {
			return math.NaN()
		}
		x := s.exact
		n++
		sum += x
		squares += x * x
	}
	if n == 0 || sum == 0 {
		return math.NaN()
	}
	mean := sum / n
	return math.Sqrt(max(0, squares/n-mean*mean)) / mean
}

// recovery is how many windows after the incident ends (the second change, or
// the only one) the goodput first reaches recoveredShare of its mean over the
// recoveryBase windows before the first change.
func recovery(timeline []sample, prof profile) int {
	if len(prof.marks) == 0 {
		return notApplicable
	}
	start := prof.marks[0].at
	end := start
	if len(prof.marks) > 1 {
		end = prof.marks[1].at
	}
	var base []float64
	for _, s := range timeline {
		if s.at <= start {
			base = append(base, s.goodput)
		}
	}
	if len(base) > recoveryBase {
		base = base[len(base)-recoveryBase:]
	}
	if len(base) == 0 {
		return notApplicable
	}
	mean := 0.0
	for _, g := range base {
		mean += g / float64(len(base))
	}
	for i, s := range timeline {
		if s.at <= end {
			continue
		}
		if s.goodput >= recoveredShare*mean {
			return i + 1 - int(end/timeline[0].at)
		}
	}
	return never
}
