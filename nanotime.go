package adaptivelimit

import _ "unsafe" // for go:linkname

// nanotime is the runtime's monotonic clock: time.Now's monotonic reading without the wall
// clock, and without the time.Time value around it. The runtime keeps this link open for
// outside packages. Unlike time.Now, testing/synctest does not fake it.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64
