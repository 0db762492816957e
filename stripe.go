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
//
// A latency is added in two halves, its low 32 bits to latencyLow and the rest to
// latencyHigh, so that a window's sum is exact whatever the latencies, up to 2^31 samples a
// window: one sum of whole latencies would wrap with 1,000 calls across a clock jump of a
// year.
//
// The stripe also holds the P's lease (slots.go): its cache of idle slots, the calls that
// took and freed a slot on the P under leases, and the highest bound on the calls in flight
// for which the P counted them in the current window.
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

	// The stripe's index in stripes.at, which is its counts' by class (classSet.stripe). An
	// index, not a pointer: a stripe holds none, so that the allocator gives the stripes no
	// header, which would put them 8 bytes off their lines beyond 512 bytes of them.
	i int
	_ [cacheLineSize - 11*8]byte
}

// stripes are a power of two of sample stripes, one per P when New ran, each of which counts
// its P's rejections too; and an overflow stripe that the Ps added by raising GOMAXPROCS later
// share, with atomic adds. The overflow stripe lives in the Limiter, so that the slices are
// a power of two of lines, which the allocator serves without waste.
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

// The P id comes from the runtime, which keeps these links open for outside packages.
// Between procPin and procUnpin the goroutine cannot be preempted or move to another P, so
// the P's own stripe has no other writer.
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// pin pins the calling goroutine to its P and returns the P's stripe, and whether the P owns
// it: a P beyond the stripes (GOMAXPROCS raised after New) gets the overflow stripe, which
// only addSampleAtomic may write. Unpin with procUnpin.
func (ss *stripes) pin() (s *stripe, own bool) {
	if p := uintptr(procPin()); p <= ss.mask {
		return &ss.s[p], true
	}
	return ss.overflow, false
}

// addSampleAtomic adds a sample to s with atomic adds, for a stripe that several Ps share.
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

// totals are the stripes' counters summed.
type totals struct {
	latencyLow, latencyHigh, samples, drops, rejected uint64
	maxInFlight                                       uint64 // in window id only
}

// all returns how many stripes there are, the overflow stripe included, for at.
func (ss *stripes) all() int { return len(ss.s) + 1 }

// at returns stripe i of all: the overflow stripe last.
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

// peakMark packs a window id and a count in flight so that one unsigned compare keeps the
// larger count of the newest window: a sample of an older window never overwrites a newer.
func peakMark(id uint64, inFlight int64) uint64 {
	return (id&peakMask)<<32 | min(uint64(inFlight), peakMask)
}
