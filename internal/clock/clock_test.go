package clock

import (
	"testing"
)

func TestMonotonic(t *testing.T) {
	for name, read := range map[string]func() int64{"Ticks": Ticks, "Nanotime": Nanotime} {
		t.Run(name, func(t *testing.T) {
			prev := read()
			for range 10_000 {
				now := read()
				if now < prev {
					t.Fatalf("%s went backwards: %d after %d", name, now, prev)
				}
				prev = now
			}
		})
	}
}

// Ticks converted with NanosPerTick must track Nanotime. Each try spins until 20 ms of
// nanotime have passed and allows 5%: that bounds a badly wrong frequency (a factor of 1000
// for a ticks/ns mix-up, 10-40% for a wrong crystal ratio), not the calibration's precision.
// A thread preempted between two reads spoils one try, so it passes if any of five agrees.
func TestTicksTrackNanotime(t *testing.T) {
	if !TicksOK() {
		if NanosPerTick() != 1 {
			t.Fatalf("NanosPerTick = %v without a tick clock, want 1", NanosPerTick())
		}
		t.Skip("no safe tick counter here")
	}
	var ratio float64
	for range 5 {
		t0, c0 := Nanotime(), Ticks()
		for Nanotime()-t0 < 20_000_000 {
		}
		t1, c1 := Nanotime(), Ticks()
		ratio = float64(c1-c0) * NanosPerTick() / float64(t1-t0)
		if ratio > 0.95 && ratio < 1.05 {
			return
		}
	}
	t.Fatalf("ticks*NanosPerTick / nanotime = %.4f over 20 ms, want 1 within 5%%", ratio)
}
