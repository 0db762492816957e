package limittest

import (
	"testing"
	"time"

	"github.com/resilience4cata/adaptivelimit"
)

// Queue readies l, a Fixed limiter that has run no call, for a departure
// (adaptivelimit.Departed): it runs two windows of one call each, the first of 20 ms and the
// second of 50 ms where queued (the dependency queued: 1.25 times its latency without a queue,
// or more) or of 20 ms where not. It then moves clock on to 1 s, less ran, before the third
// window's end, so that a call of the integration that runs for ran and then departs closes
// that window: a drop where queued and ran is past 20.1 ms, ignored otherwise. Departed tells
// which.
func Queue(t testing.TB, l *adaptivelimit.Limiter, clock *adaptivelimit.ManualClock, queued bool, ran time.Duration) {
	t.Helper()
	second := 20 * time.Millisecond
	if queued {
		second = 50 * time.Millisecond
	}
	for _, latency := range []time.Duration{20 * time.Millisecond, second} {
		clock.Advance(time.Second - latency/2) // a window of one call, that closes as it ends
		p, err := l.Acquire()
		if err != nil {
			t.Fatalf("limittest.Queue: %v", err)
		}
		clock.Advance(latency)
		p.Done(nil)
	}
	if w := l.Snapshot().Windows; w != 2 {
		t.Fatalf("limittest.Queue: %d windows closed, want 2: l ran calls before, or is no Fixed limiter", w)
	}
	clock.Advance(max(time.Second-ran, 0))
}

// Departed waits until the integration has finished a call of l that departed after before
// was taken, as a drop or ignored, and returns which: "drop" or "none". It fails the test
// after 5 s.
func Departed(t testing.TB, l *adaptivelimit.Limiter, before adaptivelimit.Snapshot) string {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		s := l.Snapshot()
		switch {
		case s.Drops > before.Drops:
			return "drop"
		case s.Ignored > before.Ignored:
			return "none"
		case time.Now().After(deadline):
			t.Fatalf("limittest.Departed: no call of %q finished as a drop or ignored in 5 s", s.Name)
			return ""
		}
	}
}
