//go:build !purego

package clock

import "runtime"

func counterFrequency() int64

// tickCounterSafe is true where the kernel lets user space read the virtual counter: Linux
// and Darwin (their own clocks read it from user space too).
func tickCounterSafe() bool {
	return runtime.GOOS == "linux" || runtime.GOOS == "darwin"
}

// tickPeriod comes from CNTFRQ_EL0, the counter's frequency that firmware publishes.
func tickPeriod(func() int64) float64 {
	if hz := counterFrequency(); hz > 0 {
		return 1e9 / float64(hz)
	}
	return 0
}
