package limittest

import (
	"errors"
	"testing"
	"time"

	"github.com/resilience4cata/adaptivelimit"
)

// RequireNoSlotLost fails the test unless l, a limiter of the fixed limit n that nothing
// else uses, holds no slot and admits exactly n calls at once again: what every
// integration's TestCallbacksNeverLeakSlots checks after each call. A classed limiter's
// calls take their slots for its highest class, which may take every one, and the call
// beyond them is its lowest class's: a rejected call of a higher class would lower the
// ceilings of the classes below it (adaptivelimit.Class) for the rest of the window.
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
	highest, lowest := "", ""
	if classes := l.Classes(); len(classes) > 0 {
		highest, lowest = classes[0], classes[len(classes)-1]
	}
	for i := range n {
		p, err := l.AcquireClass(highest)
		if err != nil {
			t.Fatalf("call %d of a limit of %d rejected: %v", i+1, n, err)
		}
		held = append(held, p.Move())
	}
	if p, err := l.AcquireClass(lowest); !errors.Is(err, adaptivelimit.ErrLimitExceeded) {
		p.Cancel()
		t.Fatalf("call %d of a limit of %d admitted", n+1, n)
	}
}

// WaitFree waits until no call holds a slot of l, on the real clock, for calls that finish in
// goroutines of their own after the test saw their end (a server's, a hedge's loser); it
// fails the test if some still do after a second.
func WaitFree(t testing.TB, l *adaptivelimit.Limiter) {
	t.Helper()
	for deadline := time.Now().Add(time.Second); l.InFlight() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls still hold a slot", l.InFlight())
		}
	}
}

// PanickingError is an error whose every method panics, the ones that errors.Is, errors.As,
// a net.Error check and DropOn call included: what a callback returns at its worst. Use a
// nil *PanickingError.
type PanickingError struct{ _ int }

func (*PanickingError) Error() string   { panic("limittest: PanickingError.Error") }
func (*PanickingError) Is(error) bool   { panic("limittest: PanickingError.Is") }
func (*PanickingError) As(any) bool     { panic("limittest: PanickingError.As") }
func (*PanickingError) Unwrap() error   { panic("limittest: PanickingError.Unwrap") }
func (*PanickingError) Timeout() bool   { panic("limittest: PanickingError.Timeout") }
func (*PanickingError) Temporary() bool { panic("limittest: PanickingError.Temporary") }
