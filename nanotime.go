package adaptivelimit

import _ "unsafe" // for go:linkname

// nanotime is time.Now's monotonic reading without the wall clock or the time.Time around
// it; the runtime keeps the link open, and testing/synctest does not fake it.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64
