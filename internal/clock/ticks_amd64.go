//go:build !purego

package clock

import (
	"os"
	"runtime"
	"strings"
)

func cpuid(leaf uint32) (eax, edx uint32)

// tickCounterSafe requires an invariant TSC (constant rate, running in every power state)
// and Linux's own clocksource on it: the kernel picks tsc only after checking that the
// counters of all processors agree, which is the property a clock shared by threads needs.
func tickCounterSafe() bool {
	if runtime.GOOS != "linux" {
		return false
	}
	if maxExtended, _ := cpuid(0x80000000); maxExtended < 0x80000007 {
		return false
	}
	if _, edx := cpuid(0x80000007); edx&(1<<8) == 0 {
		return false
	}
	source, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	return err == nil && strings.TrimSpace(string(source)) == "tsc"
}

// tickPeriod measures the TSC against nanotime over a millisecond. The two readings at each
// end are bracketed by tick reads, and retried when the thread was interrupted between them,
// so the error stays near 2e-5.
func tickPeriod(nanotime func() int64) float64 {
	const span = 1_000_000 // ns
	for range 5 {
		t0, c0, ok0 := pair(nanotime)
		for nanotime()-t0 < span {
		}
		t1, c1, ok1 := pair(nanotime)
		if ok0 && ok1 && c1 > c0 {
			return float64(t1-t0) / float64(c1-c0)
		}
	}
	return 0
}

func pair(nanotime func() int64) (ns, tick int64, ok bool) {
	before := ticks()
	ns = nanotime()
	after := ticks()
	return ns, before + (after-before)/2, after-before < 10_000
}
