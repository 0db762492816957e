// Package limittest provides utilities for testing code that puts an adaptive limit around
// calls, as net/http/httptest does for HTTP: the integrations of this repository test with
// it, and so can integrations of your own.
//
// A Fixed limiter has a fixed limit on a ManualClock and closes its window after a single
// call, so that after one call Classified tells whether the integration finished it as a
// sample, a drop, or freed its slot without a sample. A DeadlineContext times out when the
// test says so, without a timer. Queue readies a Fixed limiter for a call whose caller goes
// away (adaptivelimit.Departed), queued or not, and Departed tells how the integration
// finished it. Orders runs known traffic, for tests of metrics; Classed and ClassTraffic do
// the same for a limiter with priority classes.
package limittest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/resilience4cata/adaptivelimit"
)

// Fixed returns a limiter of a fixed limit on a ManualClock, whose window of 1 s closes
// after a single call, so that Classified tells how a call was classified.
func Fixed(t testing.TB, name string, limit int) (*adaptivelimit.Limiter, *adaptivelimit.ManualClock) {
	t.Helper()
	clock := adaptivelimit.NewManualClock()
	l, err := adaptivelimit.New(adaptivelimit.Config{
		Name: name, MinLimit: limit, MaxLimit: limit, InitialLimit: limit,
		MinWindowSamples: 1, Window: time.Second, Clock: clock,
	})
	if err != nil {
		t.Fatal(err)
	}
	return l, clock
}

// Classified reads how the single finished call of a Fixed limiter whose clock passed the
// window's end was classified: "sample", "drop", or "none" when its slot was freed without a
// sample. It fails the test if a call still holds a slot.
func Classified(t testing.TB, l *adaptivelimit.Limiter) string {
	t.Helper()
	s := l.Snapshot()
	if s.InFlight != 0 {
		t.Fatalf("%d calls hold a slot", s.InFlight)
	}
	switch {
	case s.Windows == 0:
		return "none"
	case s.Last.Samples == 1 && s.Last.Drops == 1:
		return "drop"
	case s.Last.Samples == 1 && s.Last.Drops == 0:
		return "sample"
	}
	t.Fatalf("unexpected window: %+v", s.Last)
	return ""
}

// DeadlineContext is a context whose deadline passes when the test calls Pass, so that a
// timeout needs no timer.
type DeadlineContext struct {
	context.Context
	done chan struct{}
	pass sync.Once
}

// NewDeadlineContext returns a DeadlineContext whose deadline has not passed.
func NewDeadlineContext() *DeadlineContext {
	return &DeadlineContext{Context: context.Background(), done: make(chan struct{})}
}

func (c *DeadlineContext) Done() <-chan struct{} { return c.done }

func (c *DeadlineContext) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// Pass makes the deadline pass.
func (c *DeadlineContext) Pass() { c.pass.Do(func() { close(c.done) }) }

// Orders runs known traffic on a ManualClock and returns its limiter, "orders": two calls
// of 1 s fill the limit of 2 and a third is rejected; the first to end closes the window,
// which moves the limit to 6 (Smoothing 1: 2 + QueueSize); the other call still runs.
func Orders(t testing.TB) *adaptivelimit.Limiter {
	t.Helper()
	clock := adaptivelimit.NewManualClock()
	l, err := adaptivelimit.New(adaptivelimit.Config{
		Name: "orders", InitialLimit: 2, MinWindowSamples: 1, Smoothing: 1, Clock: clock,
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err1 := l.Acquire()
	_, err2 := l.Acquire()
	_, err3 := l.Acquire()
	if err := errors.Join(err1, err2); err != nil || !errors.Is(err3, adaptivelimit.ErrLimitExceeded) {
		t.Fatalf("acquire: %v, third: %v", err, err3)
	}
	clock.Advance(time.Second)
	a.Done(nil)
	return l
}

// Classed returns a limiter of a fixed limit on a ManualClock with two priority classes:
// critical, which reserves half of the limit, and batch, the lowest, which reserves none.
func Classed(t testing.TB, name string, limit int) *adaptivelimit.Limiter {
	t.Helper()
	l, err := adaptivelimit.New(adaptivelimit.Config{
		Name: name, InitialLimit: limit, MinLimit: limit, MaxLimit: limit, Clock: adaptivelimit.NewManualClock(),
		Classes: []adaptivelimit.Class{{Name: "critical", Reserve: 0.5}, {Name: "batch"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// ClassTraffic runs known traffic on a Classed limiter: one critical call and as many batch
// calls as batch's ceiling lets in (the limit less the never-lent half of critical's
// reserve, rounded up), which stay in flight until the test ends, and one batch call
// rejected.
func ClassTraffic(t testing.TB, l *adaptivelimit.Limiter) {
	t.Helper()
	held := []adaptivelimit.Permit{}
	p, err := l.AcquireClass("critical")
	if err != nil {
		t.Fatal(err)
	}
	for ; err == nil; p, err = l.AcquireClass("batch") {
		held = append(held, p.Move())
	}
	t.Cleanup(func() {
		for i := range held {
			held[i].Done(nil)
		}
	})
}

// HoldClassed takes every slot of a Classed limiter of 2, a batch call's and a critical
// call's, and returns a function that finishes both as successes. The batch call comes first:
// the never-lent half of critical's reserve is no batch call's.
func HoldClassed(t testing.TB, l *adaptivelimit.Limiter) (finish func()) {
	t.Helper()
	var held []adaptivelimit.Permit
	for _, class := range []string{"batch", "critical"} {
		p, err := l.AcquireClass(class)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, p.Move())
	}
	return func() {
		for i := range held {
			held[i].Done(nil)
		}
	}
}
