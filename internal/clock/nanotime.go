package clock

import _ "unsafe" // for go:linkname

// nanotime is the runtime's monotonic clock: time.Now's monotonic reading without the
// wall clock, and without the allocation-free but slower time.Time value around it.
// The runtime keeps this link open for outside packages.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// Nanotime returns the runtime's monotonic clock in nanoseconds.
func Nanotime() int64 { return nanotime() }
