package adaptivelimit

import (
	"runtime"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// cacheLineSize is the padding unit: 128 bytes, as Intel's adjacent-line prefetcher and some
// Arm cores move 64-byte lines in aligned pairs; or the line where longer (s390x).
const cacheLineSize = max(128, unsafe.Sizeof(cpu.CacheLinePad{}))

// pad keeps what follows it off the cache lines of what precedes it.
type pad [cacheLineSize]byte

// stripe holds one P's cumulative sample counters, added to by calls on that P alone, and its
// lease (slots.go). The closer subtracts its last reading (differences survive wrapping), so
// nothing is reset under a writer. Split in two, a window's latency sum is exact up to 2^31
// samples; one sum would wrap with 1,000 calls across a year's clock jump.
type stripe struct {
	latencyLow  uint64 // sum of latencies mod 2^32, in clock units
	latencyHigh uint64 // sum of latencies >> 32
	samples     uint64
	drops       uint64
	peak        uint64 // window id << 32 | the most calls in flight a sample saw in that window

	cache     int64  // idle slots the P keeps; another P may take them all at once
	acquired  uint64 // calls counted under leases that took a slot on this P
	released  uint64 // calls counted under leases that freed a slot on this P
	countedTo uint64 // the highest bound on the calls in flight counted here in this window
	rejected  uint64 // calls rejected on this P

	// Index in stripes.at and classSet.stripe. Not a pointer: pointer-free stripes get no
	// allocator header, which would put them 8 bytes off their lines beyond 512 bytes.
	i int
	_ [cacheLineSize - 11*8]byte
}

// stripes are a power of two of stripes, one per P at New, and an overflow stripe that Ps added
// later share; it lives in the Limiter, keeping the slice a power of two of lines (no waste).
type stripes struct {
	s        []stripe
	mask     uintptr
	overflow *stripe
}

func newStripes(overflow *stripe) stripes {
	n := 1
	for n < runtime.GOMAXPROCS(0) {
		n <<= 1
	}
	ss := stripes{s: make([]stripe, n), mask: uintptr(n - 1), overflow: overflow}
	for i := range ss.all() {
		ss.at(i).i = i
	}
	return ss
}

// The runtime keeps these links open to outside packages. While pinned, the goroutine can
// neither be preempted nor move, so its P's own stripe has no other writer.
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// pin pins the goroutine to its P and returns the P's stripe and whether the P owns it: a P
// beyond the stripes gets overflow, which it may write only atomically. Unpin with procUnpin.
func (ss *stripes) pin() (s *stripe, own bool) {
	if p := uintptr(procPin()); p <= ss.mask {
		return &ss.s[p], true
	}
	return ss.overflow, false
}

// addSampleAtomic is addSample for a stripe that several Ps share.
func addSampleAtomic(s *stripe, latency, drop, peak uint64) {
	atomic.AddUint64(&s.latencyLow, latency&(1<<32-1))
	if high := latency >> 32; high != 0 {
		atomic.AddUint64(&s.latencyHigh, high)
	}
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

type totals struct {
	latencyLow, latencyHigh, samples, drops, rejected uint64
	maxInFlight                                       uint64 // in window id only
}

// all returns how many stripes there are, the overflow stripe included, for at.
func (ss *stripes) all() int { return len(ss.s) + 1 }

func (ss *stripes) at(i int) *stripe {
	if i < len(ss.s) {
		return &ss.s[i]
	}
	return ss.overflow
}

// sum reads every stripe; maxInFlight is the most in flight that samples of window id saw.
func (ss *stripes) sum(id uint64) totals {
	var t totals
	for i := range ss.all() {
		s := ss.at(i)
		t.latencyLow += atomic.LoadUint64(&s.latencyLow)
		t.latencyHigh += atomic.LoadUint64(&s.latencyHigh)
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

// peakMark packs a window id over a count, so one compare keeps the newest window's largest.
func peakMark(id uint64, inFlight int64) uint64 {
	return (id&peakMask)<<32 | min(uint64(inFlight), peakMask)
}
