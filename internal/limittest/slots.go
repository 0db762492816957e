package limittest

import (
	"errors"
	"testing"

	"github.com/resilience4cata/adaptivelimit"
)

// RequireNoSlotLost fails the test unless l, a limiter of the fixed limit n that nothing
// else uses, holds no slot and admits exactly n calls at once again: what every
// integration's TestCallbacksNeverLeakSlots checks after each call.
func RequireNoSlotLost(t testing.TB, l *adaptivelimit.Limiter, n int) {
	t.Helper()
	if got := l.InFlight(); got != 0 {
		t.Fatalf("%d calls hold a slot after the call ended", got)
	}
	held := make([]adaptivelimit.Permit, 0, n)
	defer func() {
		for i := range held {
			held[i].Cancel()
		}
	}()
	for i := range n {
		p, err := l.Acquire()
		if err != nil {
			t.Fatalf("call %d of a limit of %d rejected: %v", i+1, n, err)
		}
		held = append(held, p)
	}
	if p, err := l.Acquire(); !errors.Is(err, adaptivelimit.ErrLimitExceeded) {
		p.Cancel()
		t.Fatalf("call %d of a limit of %d admitted", n+1, n)
	}
}
