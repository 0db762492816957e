//go:build !(amd64 || arm64) || purego

package adaptivelimit

import (
	"sync/atomic"
	"unsafe"
)

// Without assembly the stripe is the P's, from runtime.procPin, and the adds are atomic:
// plain adds would be a data race in Go. The runtime keeps these links open for outside
// packages.
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

func ownStripe(base *stripe, mask uint64) *stripe {
	i := uint64(procPin()) & mask
	procUnpin()
	return (*stripe)(unsafe.Add(unsafe.Pointer(base), uintptr(i)*unsafe.Sizeof(stripe{})))
}

// addSample adds a sample to the calling P's stripe among those from base.
func addSample(base *stripe, mask, latency, drop, peak uint64) {
	s := ownStripe(base, mask)
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

// addRejection adds a rejection to the calling P's stripe among those from base.
func addRejection(base *stripe, mask uint64) { atomic.AddUint64(&ownStripe(base, mask).rejected, 1) }
