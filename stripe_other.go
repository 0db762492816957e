//go:build !(amd64 || arm64) || purego

package adaptivelimit

import "sync/atomic"

// addSample adds a sample atomically: purego and unmeasured architectures keep clear of the
// benign race of amd64's and arm64's plain adds (stripe_amd64.go).
func addSample(s *stripe, latency, drop, peak uint64) { addSampleAtomic(s, latency, drop, peak) }

func (ss *stripes) reject() {
	if p := uintptr(procPin()); p <= ss.mask {
		atomic.AddUint64(&ss.s[p].rejected, 1)
	} else {
		atomic.AddUint64(&ss.overflow.rejected, 1)
	}
	procUnpin()
}

func bump(counter *uint64, d uint64) { atomic.AddUint64(counter, d) }
