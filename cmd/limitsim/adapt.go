package main

// The report says a limit has adapted to a capacity change once it is within
// [adaptLow, adaptHigh] times the new capacity and stays there for adaptHold
// windows. Below the band the dependency idles while calls are rejected;
// above it, calls queue for more than half a service time on average.
const (
	adaptLow  = 0.75
	adaptHigh = 2.0
	adaptHold = 5
)

// adaptNever stands for a limit that never settled within the band before the
// next change or the end of the run.
const adaptNever = -1

// adaptWindows returns, for each marked capacity change, how many windows
// after it the limit settled within the band around the new capacity.
func adaptWindows(timeline []sample, marks []capacityStep, window, end int64) []int {
	out := make([]int, len(marks))
	for m, mark := range marks {
		until := end
		if m+1 < len(marks) {
			until = marks[m+1].at
		}
		out[m] = adaptNever
		run := 0
		for _, s := range timeline {
			if s.at <= mark.at || s.at > until {
				continue
			}
			if !inBand(s.exact, mark.slots()) {
				run = 0
				continue
			}
			if run++; run == adaptHold {
				first := s.at - int64(adaptHold-1)*window
				out[m] = int((first - mark.at + window - 1) / window)
				break
			}
		}
	}
	return out
}

// inBand tells whether a summed limit, as a real number, is within the band around slots:
// never for no limit, whose sum is +Inf.
func inBand(limit, slots float64) bool {
	return limit >= adaptLow*slots && limit <= adaptHigh*slots
}
