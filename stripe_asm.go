//go:build (amd64 || arm64) && !purego

package adaptivelimit

import "sync/atomic"

// reject counts a rejection on the pinned P's stripe with a plain increment: no other writer,
// no preemption splits it. norace hides the benign race with the closer's reads.
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

// bump adds d to a counter of the pinned P's own stripe, plainly, as reject does.
//
//go:norace
func bump(counter *uint64, d uint64) { *counter += d }
