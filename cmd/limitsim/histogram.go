package main

import "math/bits"

// histogram counts latencies in microseconds in log-linear buckets: exact
// below 256 µs, then 128 buckets per power of two, so a quantile is off by
// less than 1%. Buckets are fixed, so recording never allocates.
type histogram struct {
	counts [histBuckets]uint64
	total  uint64
}

const (
	histExact   = 256
	histSub     = 128
	histShifts  = 40
	histBuckets = histExact + histShifts*histSub
)

func (h *histogram) record(ns int64) {
	h.counts[bucketOf(uint64(max(ns, 0))/1000)]++
	h.total++
}

func bucketOf(us uint64) int {
	if us < histExact {
		return int(us)
	}
	shift := min(bits.Len64(us)-8, histShifts)
	sub := min(us>>shift, 2*histSub-1)
	return histExact + (shift-1)*histSub + int(sub-histSub)
}

// bucketMid returns the middle of a bucket, in nanoseconds.
func bucketMid(b int) int64 {
	if b < histExact {
		return int64(b)*1000 + 500
	}
	shift := (b-histExact)/histSub + 1
	sub := uint64((b-histExact)%histSub + histSub)
	lo := sub << shift
	return int64(lo+(uint64(1)<<shift)/2) * 1000
}

// quantile returns the latency below which a share q of the calls fell, in
// nanoseconds, or 0 for an empty histogram.
func (h *histogram) quantile(q float64) int64 {
	if h.total == 0 {
		return 0
	}
	rank := uint64(q*float64(h.total-1)) + 1
	seen := uint64(0)
	for b, n := range h.counts {
		seen += n
		if seen >= rank {
			return bucketMid(b)
		}
	}
	return bucketMid(histBuckets - 1)
}

func (h *histogram) reset() { *h = histogram{} }
