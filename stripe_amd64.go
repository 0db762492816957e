//go:build !purego

package adaptivelimit

// addSample adds a sample to s with plain adds: s belongs to the P of the calling goroutine,
// which is pinned to it, so no locked instruction is needed. The window closer may see the
// adds in any order; what it misses it sees at the next window. The norace directive keeps
// this intentional, benign race with the closer's atomic reads out of the race detector's
// reports.
//
// It is Go, not assembly as on arm64: the compiler inlines it, where a call to assembly
// passes its arguments on the stack and reloads the goroutine's register after it. That
// made a call 2% slower with one goroutine and 3% slower with two (bench/README.md).
//
//go:norace
func addSample(s *stripe, latency, drop, peak uint64) {
	s.latencyLow += latency & (1<<32 - 1)
	s.latencyHigh += latency >> 32
	s.samples++
	s.drops += drop
	if peak > s.peak {
		s.peak = peak
	}
}
