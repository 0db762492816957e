package clock

// Ticks returns the processor's tick counter: RDTSC on amd64, CNTVCT_EL0 on arm64, and 0
// where there is no such counter or the purego tag is set. Use it as a clock only where
// Calibrate reports true, and convert with the period it returns.
func Ticks() int64 { return ticks() }

// Calibrate reports whether Ticks is a safe monotonic clock on this machine (a counter that
// runs at a constant rate, does not stop, and agrees across processors) and how many
// nanoseconds one tick lasts, measured against nanotime, the runtime's monotonic clock. It
// may take a millisecond: call it once. Without a safe counter it returns 1, false.
func Calibrate(nanotime func() int64) (nanosPerTick float64, ok bool) {
	if !tickCounterSafe() {
		return 1, false
	}
	if ns := tickPeriod(nanotime); ns > 0 {
		return ns, true
	}
	return 1, false
}
