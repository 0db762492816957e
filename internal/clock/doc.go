// Package clock reads the processor's tick counter, and tells where it is safe to use as a
// clock and how long a tick lasts.
//
// A tick read costs a third of a nanotime read on the machines we measure, and a call
// reads the clock twice, so the tick counter is the limiter's default wherever it is safe.
// The package is internal so that the benchmarks' floor can read exactly the same counter.
// It does not read the runtime's nanotime itself: the limiter holds that link (nanotime.go)
// and hands it to Calibrate.
package clock
