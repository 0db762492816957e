//go:build (amd64 || arm64) && !purego

package adaptivelimit

import "sync/atomic"

// reject counts a rejection on the calling P's stripe with a plain increment: the P is
// pinned, so the increment has no other writer and no preemption splits it. The norace
// directive keeps the intentional race with the window closer's reads out of the race
// detector's reports.
//
//go:norace
func (ss *stripes) reject() {
	if p := uintptr(procPin()); p <= ss.mask {
		ss.s[p].rejected++
	} else {
		atomic.AddUint64(&ss.overflow.rejected, 1)
	}
	procUnpin()
}

// bump adds d to a counter of the calling P's own stripe with a plain add: the P is pinned,
// so the add has no other writer, and readers load the counter atomically. The norace
// directive keeps this intentional race with those reads out of the race detector's reports.
//
//go:norace
func bump(counter *uint64, d uint64) { *counter += d }
