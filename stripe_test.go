package adaptivelimit

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// Each hot word sits alone on its cache line (or shares it on purpose, as the limit does the
// shared count of slots), and every stripe is exactly one line.
func TestPadding(t *testing.T) {
	require.Equal(t, cacheLineSize, unsafe.Sizeof(stripe{}))
	require.Equal(t, cacheLineSize, unsafe.Sizeof(counter{}))

	var l Limiter
	inFlight := unsafe.Offsetof(l.slots) + unsafe.Offsetof(l.slots.taken)
	limit := unsafe.Offsetof(l.slots) + unsafe.Offsetof(l.slots.limit)
	end := unsafe.Offsetof(l.window) + unsafe.Offsetof(l.window.end)
	id := unsafe.Offsetof(l.window) + unsafe.Offsetof(l.window.id)
	readOnly := unsafe.Offsetof(l.stripes)
	require.GreaterOrEqual(t, unsafe.Offsetof(l.overflow)-unsafe.Offsetof(l.cfg)-unsafe.Sizeof(l.cfg), cacheLineSize,
		"the overflow stripe is a line away from the configuration")
	require.Equal(t, inFlight/cacheLineSize, limit/cacheLineSize, "limit shares the in-flight line")
	require.Equal(t, end/cacheLineSize, id/cacheLineSize)
	require.GreaterOrEqual(t, end-limit, cacheLineSize, "the window is a line away from the slots")
	require.GreaterOrEqual(t, readOnly-id, cacheLineSize, "the read-only fields are a line away from the window")
	require.GreaterOrEqual(t, inFlight, cacheLineSize, "nothing before the slots shares their line")

	ss := newStripes(new(stripe))
	require.Zero(t, uintptr(unsafe.Pointer(&ss.s[0]))%cacheLineSize, "stripes start on a line")
	require.Zero(t, uintptr(unsafe.Pointer(&ss.rejected[0]))%cacheLineSize, "counters start on a line")
	perP := len(ss.rejected)
	require.GreaterOrEqual(t, perP, runtime.GOMAXPROCS(0), "a stripe per P")
	require.Less(t, perP, 2*runtime.GOMAXPROCS(0), "no more than a power of two needs")
	require.Zero(t, perP&(perP-1), "a power of two")
	require.Len(t, ss.s, perP)
	require.Equal(t, uintptr(perP-1), ss.mask)
}

// sample adds one sample to the calling P's stripe, as a completing call does.
func (ss *stripes) sample(latency, drop, peak uint64) {
	s, own := ss.pin()
	if own {
		addSample(s, latency, drop, peak)
	} else {
		addSampleAtomic(s, latency, drop, peak)
	}
	procUnpin()
}

func TestStripeAdds(t *testing.T) {
	ss := newStripes(new(stripe))
	ss.sample(100, 0, peakMark(0, 3))
	ss.sample(50, 1, peakMark(0, 7))
	ss.sample(25, 0, peakMark(0, 5))
	ss.reject()
	got := ss.sum(0)
	require.Equal(t, totals{latencyLow: 175, samples: 3, drops: 1, rejected: 1, maxInFlight: 7}, got)

	ss.sample(10, 0, peakMark(1, 2))
	ss.sample(10, 0, peakMark(0, 9)) // a sample of the closed window: it cannot raise the new one
	got = ss.sum(1)
	require.Equal(t, uint64(5), got.samples)
	require.Equal(t, uint64(2), got.maxInFlight)
}

// Many goroutines adding at once, on more Ps than there are stripes: each adds to its own
// P's stripe while pinned to it, or to the overflow stripe with atomic adds, so no sample is
// lost and none invented. Rejections are counted apart, and never invented.
func TestStripesConcurrent(t *testing.T) {
	ss := newStripes(new(stripe))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2 * len(ss.s)))
	const goroutines, each = 8, 20_000
	checkStripeAdds(t, ss.sample, func() totals { return ss.sum(0) }, goroutines, each, ss.reject)
	require.LessOrEqual(t, ss.sum(0).rejected, uint64(goroutines*each), "never invented")
}

// checkStripeAdds runs goroutines that each add samples with add (latency 1, every other
// one a drop, the goroutine's number as its count in flight) and call also, and reports a
// failure unless sum then gives every sample exactly.
func checkStripeAdds(r reporter, add func(latency, drop, peak uint64), sum func() totals, goroutines, each int, also func()) {
	r.Helper()
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				add(1, uint64(i&1), peakMark(0, int64(g)))
				also()
			}
		})
	}
	wg.Wait()
	got := sum()
	n := uint64(goroutines * each)
	if want := (totals{latencyLow: n, samples: n, drops: n / 2, maxInFlight: uint64(goroutines - 1)}); got.latencyLow != want.latencyLow ||
		got.latencyHigh != 0 || got.samples != want.samples || got.drops != want.drops || got.maxInFlight != want.maxInFlight {
		r.Errorf("the stripes hold %+v, want %+v", got, want)
	}
}

// checkStripeAdds fails where an add is lost.
func TestCheckStripeAddsCatchesALostSample(t *testing.T) {
	ss := newStripes(new(stripe))
	var adds atomic.Int64
	lossy := func(latency, drop, peak uint64) {
		if adds.Add(1) != 1000 {
			ss.sample(latency, drop, peak)
		}
	}
	var rec recorder
	checkStripeAdds(&rec, lossy, func() totals { return ss.sum(0) }, 4, 1000, func() {})
	require.NotEmpty(t, rec.failures)
}

func TestPeakMark(t *testing.T) {
	require.Less(t, peakMark(1, 1<<40), peakMark(2, 0), "a newer window outranks any count of an older one")
	require.Equal(t, uint64(peakMask), peakMark(0, 1<<40)&peakMask, "counts saturate")
	require.Equal(t, uint64(5)<<32|9, peakMark(1<<32+5, 9), "window ids wrap")
}
