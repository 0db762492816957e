package adaptivelimit

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// A limiter's memory grows with GOMAXPROCS at New: a stripe of one cache line per P, for its
// samples and its rejections, rounded up to a power of two, and one overflow stripe for the
// Ps that a later GOMAXPROCS adds. docs/behaviour.md quotes these bounds.
func TestFootprint(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, tc := range []struct {
		procs int
		most  uint64 // bytes
	}{{2, 3584}, {64, 20 << 10}, {256, 70 << 10}} {
		runtime.GOMAXPROCS(tc.procs)
		footprint() // settles what the first GC after a change of GOMAXPROCS frees
		got := footprint()
		t.Logf("GOMAXPROCS %d: %d bytes a limiter (%d of them the Limiter itself)", tc.procs, got, unsafe.Sizeof(Limiter{}))
		require.LessOrEqual(t, got, tc.most, "GOMAXPROCS %d", tc.procs)
	}
}

// footprint is the heap that a limiter keeps, averaged over many.
func footprint() uint64 {
	limiters := make([]*Limiter, 200)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range limiters {
		limiters[i], _ = New(Config{Name: "checkout"})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(limiters)
	return (after.HeapAlloc - before.HeapAlloc) / uint64(len(limiters))
}
