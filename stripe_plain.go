//go:build (amd64 || arm64) && !purego

package adaptivelimit

import "unsafe"

// reject counts a rejection with a plain increment, inlined: a rejection costs a few
// nanoseconds, and pinning the P or calling assembly would double that. The counter is
// picked by the middle bits of a multiplicative hash of the goroutine's stack address, so
// goroutines running at once seldom share one; two that do and race can lose a count, never
// invent one. The norace directive keeps this intentional race out of the race detector's
// reports.
//
//go:norace
func (ss *stripes) reject() {
	var onStack byte
	i := uintptr(unsafe.Pointer(&onStack)) * 0x9E3779B97F4A7C15 >> 32 & ss.mask
	c := (*counter)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(ss.rejected)), i*unsafe.Sizeof(counter{})))
	c.n++
}

// bump adds d to a counter of the calling P's own stripe with a plain add: the P is pinned,
// so the add has no other writer, and readers load the counter atomically. The norace
// directive keeps this intentional race with those reads out of the race detector's reports.
//
//go:norace
func bump(counter *uint64, d uint64) { *counter += d }
