//go:build !purego

package adaptivelimit

// addSample adds a sample to s, the pinned P's own stripe, with plain adds (no locked
// instruction): the closer may see them in any order, and what it misses next window; norace
// hides this benign race. In Go, not assembly as on arm64, it inlines (bench/README.md: 2-4%).
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
