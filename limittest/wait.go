package limittest

import (
	"testing"
	"time"

	"github.com/resilience4cata/adaptivelimit"
)

// FixedWaiting returns a limiter like Fixed's whose callers of AcquireContext, the
// integrations' requests among them, wait up to a minute for a slot when the limit is full.
func FixedWaiting(t testing.TB, name string, limit int) (*adaptivelimit.Limiter, *adaptivelimit.ManualClock) {
	t.Helper()
	clock := adaptivelimit.NewManualClock()
	l, err := adaptivelimit.New(adaptivelimit.Config{
		Name: name, MinLimit: limit, MaxLimit: limit, InitialLimit: limit,
		MinWindowSamples: 1, Window: time.Second, Clock: clock, MaxWait: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	return l, clock
}

// WhileWaiting takes every slot of l, a FixedWaiting limiter of limit n that nothing else
// uses, and runs call with a channel that receives once a caller waits for a slot, for call
// to end that caller's context then. After call returns it fails the test unless a caller
// waited and exactly the n slots it took are held, so that a caller that gave up waiting freed nothing it did
// not take, and then frees them.
func WhileWaiting(t testing.TB, l *adaptivelimit.Limiter, n int, call func(waiting chan struct{})) {
	t.Helper()
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
		held = append(held, p.Move())
	}
	waiting, stop := make(chan struct{}, 1), make(chan struct{})
	waited := make(chan bool, 1)
	go func() {
		for l.Snapshot().Waiting == 0 {
			select {
			case <-stop:
				waited <- false
				return
			case <-time.After(time.Millisecond):
			}
		}
		waiting <- struct{}{}
		waited <- true
	}()
	call(waiting)
	close(stop)
	if !<-waited {
		t.Fatalf("the call did not wait for a slot")
	}
	if got := l.InFlight(); got != n {
		t.Fatalf("%d calls hold a slot after a waiting caller gave up, want the %d taken before", got, n)
	}
	if got := l.Snapshot().Waiting; got != 0 {
		t.Fatalf("%d callers still wait", got)
	}
}
