package clock

import (
	"testing"
	"time"
)

// monotonic reads the runtime's monotonic clock through package time, as the limiter's
// nanotime does directly (time.Since reads only the monotonic clock outside synctest).
var origin = time.Now()

func monotonic() int64 { return int64(time.Since(origin)) }

func TestTicksMonotonic(t *testing.T) {
	prev := Ticks()
	for range 10_000 {
		now := Ticks()
		if now < prev {
			t.Fatalf("Ticks went backwards: %d after %d", now, prev)
		}
		prev = now
	}
}

// Ticks converted with the calibrated period must track the monotonic clock. Each try spins
// until 20 ms have passed and allows 5%: that bounds a badly wrong frequency (a factor of
// 1000 for a ticks/ns mix-up, 10-40% for a wrong crystal ratio), not the calibration's
// precision. A thread preempted between two reads spoils one try, so it passes if any of
// five agrees.
func TestTicksTrackNanotime(t *testing.T) {
	nanosPerTick, ok := Calibrate(monotonic)
	if !ok {
		if nanosPerTick != 1 {
			t.Fatalf("Calibrate = %v without a tick clock, want 1", nanosPerTick)
		}
		t.Skip("no safe tick counter here")
	}
	var ratio float64
	for range 5 {
		t0, c0 := monotonic(), Ticks()
		for monotonic()-t0 < 20_000_000 {
		}
		t1, c1 := monotonic(), Ticks()
		ratio = float64(c1-c0) * nanosPerTick / float64(t1-t0)
		if ratio > 0.95 && ratio < 1.05 {
			return
		}
	}
	t.Fatalf("ticks*nanosPerTick / nanotime = %.4f over 20 ms, want 1 within 5%%", ratio)
}
