//go:build !purego

package adaptivelimit

// addSample adds a sample to s with plain adds: s belongs to the P of the calling goroutine,
// which is pinned to it, so no locked instruction is needed. The window closer may see the
// adds in any order; what it misses it sees at the next window. Written in assembly
// (stripe_arm64.s) so that the race detector does not see this intentional, benign race.
// amd64's is Go (stripe_amd64.go), which measured faster there; this one has not been
// measured against Go on arm64 hardware.
//
//go:noescape
func addSample(s *stripe, latency, drop, peak uint64)
