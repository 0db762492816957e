//go:build !purego

package adaptivelimit

// addSample adds a sample with plain adds as on amd64 (stripe_amd64.go), in assembly
// (stripe_arm64.s) so the race detector skips the benign race; not measured against Go on arm64.
//
//go:noescape
func addSample(s *stripe, latency, drop, peak uint64)
