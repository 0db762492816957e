package main

import (
	"math"
	"testing"
)

func TestHistogramQuantilesWithinOnePercent(t *testing.T) {
	var h histogram
	// 1 µs to 10 s, evenly: the q-quantile is about q * 10 s.
	const n = 100_000
	for i := 1; i <= n; i++ {
		h.record(int64(i) * 100_000)
	}
	for _, q := range []float64{0.01, 0.5, 0.9, 0.99} {
		got := float64(h.quantile(q))
		want := q * n * 100_000
		if math.Abs(got-want)/want > 0.01 {
			t.Errorf("q%g: got %.0f ns, want %.0f ns", q, got, want)
		}
	}
}

func TestHistogramSmallValuesAndEmpty(t *testing.T) {
	var h histogram
	if got := h.quantile(0.99); got != 0 {
		t.Errorf("empty: %d", got)
	}
	h.record(-5) // a clock can't go back, but a negative latency must not index outside
	h.record(42_000)
	if got := h.quantile(1); got != 42_500 {
		t.Errorf("got %d, want the middle of the 42 µs bucket", got)
	}
	h.reset()
	if h.total != 0 {
		t.Error("reset kept counts")
	}
}

func TestBucketsAreContiguous(t *testing.T) {
	prev := bucketOf(0)
	for us := uint64(1); us < 1<<20; us++ {
		b := bucketOf(us)
		if b != prev && b != prev+1 {
			t.Fatalf("%d µs: bucket %d after %d", us, b, prev)
		}
		if mid := bucketMid(b) / 1000; b >= histExact && (uint64(mid) < us/2 || uint64(mid) > us*2) {
			t.Fatalf("%d µs: bucket %d has middle %d µs", us, b, mid)
		}
		prev = b
	}
}
