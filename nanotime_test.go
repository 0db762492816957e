package adaptivelimit

import "testing"

func TestSystemClocksMonotonic(t *testing.T) {
	for name, c := range map[string]Clock{"nanotime": NanotimeClock(), "ticks": TickClock()} {
		t.Run(name, func(t *testing.T) {
			prev := c.Nanotime()
			for range 10_000 {
				now := c.Nanotime()
				if now < prev {
					t.Fatalf("went backwards: %d after %d", now, prev)
				}
				prev = now
			}
		})
	}
}
