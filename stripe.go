package adaptivelimit

import (
	"runtime"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// cacheLineSize is the padding unit: 128 bytes, or the line where it is longer (s390x).
// Lines are 64 bytes on most processors, but Intel's adjacent-line prefetcher, and some Arm
// cores, move them in aligned pairs, so two hot words 64 bytes apart still contend.
const cacheLineSize = max(128, unsafe.Sizeof(cpu.CacheLinePad{}))

// pad keeps what follows it off the cache lines of what precedes it.
type pad [cacheLineSize]byte

// stripe holds one P's cumulative sample counters. A completing call adds to the stripe of
// the P it runs on, so no two processors write the same line; the window closer reads every
// stripe and subtracts what it read the last time, so nothing is reset under a writer. The
// counters wrap around, and differences of them stay right.
type stripe struct {
	latency uint64 // sum of latencies, in clock units
	samples uint64
	drops   uint64
	peak    uint64 // window id << 32 | the most calls in flight a sample saw in that window
	_       [cacheLineSize - 4*8]byte
}

// counter is a rejection counter with a line of its own.
type counter struct {
	n uint64
	_ [cacheLineSize - 8]byte
}

// stripes are a power of two of sample stripes, one per P, and as many rejection counters.
type stripes struct {
	s        []stripe
	rejected []counter
	mask     uintptr
}

func newStripes() stripes {
	n := 2
	for n < 2*max(runtime.GOMAXPROCS(0), runtime.NumCPU()) {
		n <<= 1
	}
	return stripes{s: make([]stripe, n), rejected: make([]counter, n), mask: uintptr(n - 1)}
}

// The P id comes from the runtime, which keeps these links open for outside packages.
// Between procPin and procUnpin the goroutine cannot be preempted or move to another P, so
// its stripe has no other writer while GOMAXPROCS does not grow past the stripes.
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// pin pins the calling goroutine to its P and returns the P's stripe. Unpin with procUnpin.
func (ss *stripes) pin() *stripe { return &ss.s[uintptr(procPin())&ss.mask] }

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
		if p := atomic.LoadUint64(&s.peak); p>>32 == id&peakMask {
			t.maxInFlight = max(t.maxInFlight, p&peakMask)
		}
		t.rejected += atomic.LoadUint64(&ss.rejected[i].n)
	}
	return t
}

const peakMask = 1<<32 - 1

// peakMark packs a window id and a count in flight so that one unsigned compare keeps the
// larger count of the newest window: a sample of an older window never overwrites a newer.
func peakMark(id uint64, inFlight int64) uint64 {
	return (id&peakMask)<<32 | min(uint64(inFlight), peakMask)
}
