//go:build !(amd64 || arm64) || purego

package adaptivelimit

import "sync/atomic"

// addSample adds a sample to s, the calling P's stripe, with atomic adds: the purego build,
// and the architectures we have not measured, keep clear of the intentional data race that
// the plain adds of amd64 and arm64 run with the window closer's reads.
func addSample(s *stripe, latency, drop, peak uint64) { addSampleAtomic(s, latency, drop, peak) }

// reject counts a rejection on the calling P's counter, atomically.
func (ss *stripes) reject() {
	if p := uintptr(procPin()); p <= ss.mask {
		atomic.AddUint64(&ss.s[p].rejected, 1)
	} else {
		atomic.AddUint64(&ss.overflow.rejected, 1)
	}
	procUnpin()
}

// bump adds d to a counter of the calling P's stripe, atomically.
func bump(counter *uint64, d uint64) { atomic.AddUint64(counter, d) }
