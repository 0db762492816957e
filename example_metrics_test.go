package adaptivelimit_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/resilience4cata/adaptivelimit"
)

// A snapshot counts the calls by outcome, and the windows by why and which way they moved
// the limit: what promlimit and otellimit export.
func ExampleSnapshot_outcomes() {
	clock := adaptivelimit.NewManualClock()
	limiter, _ := adaptivelimit.New(adaptivelimit.Config{
		Name: "orders", Algorithm: adaptivelimit.AIMD, InitialLimit: 4, MinWindowSamples: 1, Clock: clock,
	})
	p, _ := limiter.Acquire()
	p.Done(nil) // success
	p, _ = limiter.Acquire()
	p.Done(errors.New("404")) // ignored: DropOn says it is not a drop
	p, _ = limiter.Acquire()
	p.Cancel() // cancelled
	p, _ = limiter.Acquire()
	clock.Advance(time.Second)
	p.Done(context.DeadlineExceeded) // a drop, which ends the window: the limit backs off

	s := limiter.Snapshot()
	fmt.Println("successes", s.Successes, "drops", s.Drops, "ignored", s.Ignored, "cancelled", s.Cancelled)
	for cause := range adaptivelimit.Causes() {
		kept, up, down := s.Decisions(cause)
		if kept+up+down != 0 {
			fmt.Println(cause, "kept", kept, "up", up, "down", down)
		}
	}
	fmt.Println("limit", s.Last.LimitBefore, "->", s.Last.LimitAfter, "for", s.Last.Cause)
	// Output:
	// successes 1 drops 1 ignored 1 cancelled 1
	// drop kept 0 up 0 down 1
	// limit 4 -> 3 for drop
}
