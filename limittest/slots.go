package limittest

import (
	"errors"
	"testing"
	"time"

	"github.com/resilience4cata/adaptivelimit"
)

// AdmitsExactly checks that l admits n calls and rejects the next one, then frees the n
// slots: after a test of an integration, that it leaked no slot and took none too many.
func AdmitsExactly(t testing.TB, l *adaptivelimit.Limiter, n int) {
	t.Helper()
	permits := make([]adaptivelimit.Permit, 0, n)
	defer func() {
		for i := range permits {
			permits[i].Cancel()
		}
	}()
	for i := range n {
		p, err := l.Acquire()
		if err != nil {
			t.Fatalf("call %d of %d: %v", i+1, n, err)
		}
		permits = append(permits, p)
	}
	if p, err := l.Acquire(); !errors.Is(err, adaptivelimit.ErrLimitExceeded) {
		p.Cancel()
		t.Fatalf("call %d of a limit of %d: admitted", n+1, n)
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
