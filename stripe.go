package adaptivelimit

import (
	"runtime"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// cacheLineSize is the padding unit: 64 bytes on amd64, 128 on arm64, where some cores
// (Apple's, Neoverse V2 prefetching pairs of lines) move lines two at a time.
const cacheLineSize = unsafe.Sizeof(cpu.CacheLinePad{})

// stripeShift is log2 of a stripe's size, the cache line, for the assembly's indexing.
const stripeShift = 6 + cacheLineSize/128

// stripe holds cumulative sample counters for the threads that hash to it. A completing call
// adds to its own thread's stripe, so threads running at once seldom write the same line,
// and never with a locked instruction in the assembly version; the window closer
// reads every stripe and subtracts what it read the last time, so nothing is reset under a
// writer. The counters wrap around, and differences of them stay right.
type stripe struct {
	latency  uint64 // sum of latencies, in clock units
	samples  uint64
	drops    uint64
	peak     uint64 // window id << 32 | the most calls in flight a sample saw in that window
	rejected uint64
	_        [cacheLineSize - 5*8]byte
}

// stripes are a power of two of stripes, at least two per processor so that the threads
// running at one time seldom share one.
type stripes struct {
	s    []stripe
	mask uint64
}

func newStripes() stripes {
	n := 2
	for n < 2*max(runtime.GOMAXPROCS(0), runtime.NumCPU()) {
		n <<= 1
	}
	return stripes{s: make([]stripe, n), mask: uint64(n - 1)}
}

// sample adds one sample to the calling thread's stripe.
func (ss *stripes) sample(latency, drop, peak uint64) {
	addSample(&ss.s[0], ss.mask, latency, drop, peak)
}

// reject counts one rejection on the calling thread's stripe.
func (ss *stripes) reject() { addRejection(&ss.s[0], ss.mask) }

// totals are the stripes' counters summed.
type totals struct {
	latency, samples, drops, rejected uint64
	maxInFlight                       uint64 // in window id only
}

// sum reads every stripe; maxInFlight is the most in flight that samples of window id saw.
func (ss *stripes) sum(id uint64) totals {
	var t totals
	for i := range ss.s {
		s := &ss.s[i]
		t.latency += atomic.LoadUint64(&s.latency)
		t.samples += atomic.LoadUint64(&s.samples)
		t.drops += atomic.LoadUint64(&s.drops)
		t.rejected += atomic.LoadUint64(&s.rejected)
		if p := atomic.LoadUint64(&s.peak); p>>32 == id&peakMask {
			t.maxInFlight = max(t.maxInFlight, p&peakMask)
		}
	}
	return t
}

const peakMask = 1<<32 - 1

// peakMark packs a window id and a count in flight so that one unsigned compare keeps the
// larger count of the newest window: a sample of an older window never overwrites a newer.
func peakMark(id uint64, inFlight int64) uint64 {
	return (id&peakMask)<<32 | min(uint64(inFlight), peakMask)
}
