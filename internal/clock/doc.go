// Package clock reads the monotonic clocks the limiter times calls with: the runtime's
// nanotime, and the processor's tick counter where that is safe to use as a clock.
//
// A tick read costs a third of a nanotime read on the machines we measure, and a call
// reads the clock twice, so the tick counter is the limiter's default wherever it is safe.
// The package is internal so that the benchmarks' floor can read exactly the same clocks.
package clock
