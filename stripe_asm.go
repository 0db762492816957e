//go:build (amd64 || arm64) && !purego

package adaptivelimit

// Implemented in stripe_amd64.s and stripe_arm64.s. They pick the stripe of the calling
// thread from the address of the runtime's m (read from the goroutine's g, where it has
// been at offset 48 in every Go release), hashed with mask: one call, no procPin. They add
// with plain instructions: a sample is lost only if two threads that share a stripe race on
// it, and a sample is never invented. Being assembly, the adds are not seen by the race
// detector, for which this intentional race would be a report.

// addSample adds a sample to the calling thread's stripe among those from base.
//
//go:noescape
func addSample(base *stripe, mask, latency, drop, peak uint64)

// addRejection adds a rejection to the calling thread's stripe among those from base.
//
//go:noescape
func addRejection(base *stripe, mask uint64)
