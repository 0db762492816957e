//go:build !(amd64 || arm64) || purego

package adaptivelimit

import "sync/atomic"

// addSample adds a sample to s, the calling P's stripe, with atomic adds: without assembly,
// plain adds racing with the window closer's reads would be a data race in Go.
func addSample(s *stripe, latency, drop, peak uint64) {
	atomic.AddUint64(&s.latency, latency)
	atomic.AddUint64(&s.samples, 1)
	if drop != 0 {
		atomic.AddUint64(&s.drops, drop)
	}
	for {
		old := atomic.LoadUint64(&s.peak)
		if peak <= old || atomic.CompareAndSwapUint64(&s.peak, old, peak) {
			return
		}
	}
}

// reject counts a rejection on the calling P's counter, atomically.
func (ss *stripes) reject() {
	atomic.AddUint64(&ss.rejected[uintptr(procPin())&ss.mask].n, 1)
	procUnpin()
}
