package clock

import "sync"

// Ticks returns the processor's tick counter: RDTSC on amd64, CNTVCT_EL0 on arm64, and
// Nanotime where there is no such counter or the purego tag is set. Use it as a clock only
// where TicksOK reports true, and convert with NanosPerTick.
func Ticks() int64 { return ticks() }

var probe struct {
	once         sync.Once
	ok           bool
	nanosPerTick float64
}

// TicksOK reports whether Ticks is a safe monotonic clock on this machine: a counter that
// runs at a constant rate, does not stop, and agrees across processors.
func TicksOK() bool {
	probe.once.Do(detect)
	return probe.ok
}

// NanosPerTick returns how many nanoseconds one tick lasts: 1 where Ticks is Nanotime.
func NanosPerTick() float64 {
	probe.once.Do(detect)
	return probe.nanosPerTick
}

func detect() {
	probe.nanosPerTick = 1
	if !tickCounterSafe() {
		return
	}
	if ns := tickPeriod(); ns > 0 {
		probe.ok, probe.nanosPerTick = true, ns
	}
}
