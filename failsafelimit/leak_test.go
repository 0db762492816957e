package failsafelimit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/hedgepolicy"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	"github.com/failsafe-go/failsafe-go/timeout"
	"github.com/stretchr/testify/require"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/failsafelimit"
	"github.com/resilience4cata/adaptivelimit/limittest"
)

// nilError is an error that is a nil pointer, which nothing but its Error method reads.
type nilError struct{ msg string }

func (e *nilError) Error() string { return e.msg }

// TestCallbacksNeverLeakSlots runs every chain the policy is documented for with each
// user-supplied function (the execution's, the limiter's DropOn) replaced by one that
// panics, returns garbage or blocks until its context ends. Afterwards no call holds a slot,
// and the fixed limit of 2 admits exactly 2 again.
func TestCallbacksNeverLeakSlots(t *testing.T) {
	const limit = 2
	chains := []struct {
		name string
		// run runs fn through the chain with l; inGoroutine: failsafe runs fn in a goroutine
		// of its own, where a panic ends the process, so that no panicking fn is tried.
		run         func(l *adaptivelimit.Limiter, ctx context.Context, fn func(failsafe.Execution[any]) error) error
		inGoroutine bool
	}{
		{"policy", func(l *adaptivelimit.Limiter, ctx context.Context, fn func(failsafe.Execution[any]) error) error {
			return failsafe.With(failsafelimit.New[any](l)).WithContext(ctx).RunWithExecution(fn)
		}, false},
		{"retry", func(l *adaptivelimit.Limiter, ctx context.Context, fn func(failsafe.Execution[any]) error) error {
			return failsafe.With(retrypolicy.NewBuilder[any]().WithMaxAttempts(3).Build(), failsafelimit.New[any](l)).WithContext(ctx).RunWithExecution(fn)
		}, false},
		{"timeout inside", func(l *adaptivelimit.Limiter, ctx context.Context, fn func(failsafe.Execution[any]) error) error {
			return failsafe.With(failsafelimit.New[any](l), timeout.New[any](time.Millisecond)).WithContext(ctx).RunWithExecution(fn)
		}, false},
		{"timeout outside", func(l *adaptivelimit.Limiter, ctx context.Context, fn func(failsafe.Execution[any]) error) error {
			return failsafe.With(timeout.New[any](time.Millisecond), failsafelimit.New[any](l)).WithContext(ctx).RunWithExecution(fn)
		}, true},
		{"hedge", func(l *adaptivelimit.Limiter, ctx context.Context, fn func(failsafe.Execution[any]) error) error {
			return failsafe.With(hedgepolicy.NewBuilderWithDelay[any](time.Millisecond).Build(), failsafelimit.New[any](l)).WithContext(ctx).RunWithExecution(fn)
		}, true},
		{"async", func(l *adaptivelimit.Limiter, ctx context.Context, fn func(failsafe.Execution[any]) error) error {
			return failsafe.With(failsafelimit.New[any](l)).WithContext(ctx).RunAsyncWithExecution(fn).Error()
		}, true},
	}
	callbacks := []struct {
		name   string
		panics bool
		dropOn func(error) bool // nil: DefaultDropOn
		fn     func(exec failsafe.Execution[any]) error
	}{
		{"fn panics", true, nil, func(failsafe.Execution[any]) error { panic("fn") }},
		{"fn returns garbage", true, nil, func(failsafe.Execution[any]) error { return (*limittest.PanickingError)(nil) }},
		{"fn returns a nil pointer error", false, nil, func(failsafe.Execution[any]) error { return (*nilError)(nil) }},
		{"fn blocks until its context ends", false, nil, func(exec failsafe.Execution[any]) error {
			<-exec.Canceled()
			return exec.Context().Err()
		}},
		{"DropOn panics", true, func(error) bool { panic("DropOn") }, func(failsafe.Execution[any]) error { return errBadRequest }},
		{"DropOn blocks until the context ends", false, nil, nil},
	}
	for _, chain := range chains {
		for _, cb := range callbacks {
			if cb.panics && chain.inGoroutine {
				continue
			}
			t.Run(chain.name+"/"+cb.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
				defer cancel()
				dropOn, fn := cb.dropOn, cb.fn
				if fn == nil { // DropOn blocks
					dropOn = func(error) bool { <-ctx.Done(); return true }
					fn = func(failsafe.Execution[any]) error { return errBadRequest }
				}
				l := fixed(t, limit, dropOn)
				func() {
					defer func() { _ = recover() }()
					_ = chain.run(l, ctx, fn)
				}()
				limittest.WaitFree(t, l)
				limittest.RequireNoSlotLost(t, l, limit)
			})
		}
	}

	// Each chain waits for a slot where the limiter has a MaxWait, and its context ends while
	// it waits: the waiting execution frees nothing it did not take. The chains with a
	// timeout of a millisecond may end before anything waits, so they are left out.
	for _, chain := range chains {
		if strings.HasPrefix(chain.name, "timeout") {
			continue
		}
		t.Run(chain.name+"/context ends while waiting", func(t *testing.T) {
			l, _ := limittest.FixedWaiting(t, "leaks", limit)
			limittest.WhileWaiting(t, l, limit, func(waiting chan struct{}) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				go func() {
					select {
					case <-waiting:
						cancel()
					case <-ctx.Done():
					}
				}()
				_ = chain.run(l, ctx, func(failsafe.Execution[any]) error { return nil })
				for deadline := time.Now().Add(time.Second); l.Snapshot().Waiting != 0 && time.Now().Before(deadline); {
					time.Sleep(time.Millisecond) // a hedge's loser gives up on its own goroutine
				}
			})
			limittest.RequireNoSlotLost(t, l, limit)
		})
	}
}

// fixed returns a limiter of a fixed limit on the real clock, with dropOn if it is not nil.
func fixed(t *testing.T, limit int, dropOn func(error) bool) *adaptivelimit.Limiter {
	t.Helper()
	l, err := adaptivelimit.New(adaptivelimit.Config{
		Name: "leaks", MinLimit: limit, MaxLimit: limit, InitialLimit: limit, DropOn: dropOn,
	})
	require.NoError(t, err)
	return l
}
