package adaptivelimit_test

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/resilience4cata/adaptivelimit"
)

// Log each change of the limit with slog.
func ExampleLogLimitChanges() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // no time, so that the output is the same on every run
			}
			return a
		},
	}))
	clock := adaptivelimit.NewManualClock()
	limiter, _ := adaptivelimit.New(adaptivelimit.Config{
		Name: "orders", Algorithm: adaptivelimit.AIMD, InitialLimit: 10, MinWindowSamples: 1, Clock: clock,
		OnLimitChange: adaptivelimit.LogLimitChanges(logger),
	})
	permit, _ := limiter.Acquire()
	clock.Advance(time.Second)
	permit.Done(context.DeadlineExceeded) // a drop ends the window: AIMD backs off
	// Output:
	// level=INFO msg="adaptive limit changed" name=orders limitBefore=10 limitAfter=9 samples=1 drops=1 meanLatency=0s maxInFlight=1 longLatency=0s gradient=0 cause=drop
}
