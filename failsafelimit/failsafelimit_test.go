package failsafelimit_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/hedgepolicy"
	"github.com/failsafe-go/failsafe-go/policy"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	"github.com/failsafe-go/failsafe-go/timeout"
	"github.com/stretchr/testify/require"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/failsafelimit"
	"github.com/resilience4cata/adaptivelimit/limittest"
)

var errBadRequest = errors.New("bad request")

// TestClassification runs one execution through the policy and reads how its permit was
// finished.
func TestClassification(t *testing.T) {
	for _, tc := range []struct {
		name  string
		inner []failsafe.Policy[any] // inside the limit
		fn    func(ctx context.Context, cancel func()) error
		want  string
	}{
		{"success", nil, func(context.Context, func()) error { return nil }, "sample"},
		{"DropOn's error", nil, func(context.Context, func()) error { return context.DeadlineExceeded }, "drop"},
		{"other error", nil, func(context.Context, func()) error { return errBadRequest }, "none"},
		{"timeout inside", []failsafe.Policy[any]{timeout.New[any](time.Millisecond)}, func(ctx context.Context, _ func()) error {
			<-ctx.Done()
			return ctx.Err()
		}, "drop"},
		{"cancelled", nil, func(ctx context.Context, cancel func()) error {
			cancel()
			return ctx.Err()
		}, "none"},
		{"cancelled after success", nil, func(_ context.Context, cancel func()) error {
			cancel()
			return nil
		}, "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, clock := limittest.Fixed(t, "classification", 1)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			policies := append([]failsafe.Policy[any]{failsafelimit.New[any](l)}, tc.inner...)
			_ = failsafe.With(policies...).WithContext(ctx).RunWithExecution(func(exec failsafe.Execution[any]) error {
				require.Equal(t, 1, l.InFlight())
				clock.Advance(time.Second)
				return tc.fn(exec.Context(), cancel)
			})
			require.Equal(t, tc.want, limittest.Classified(t, l))
		})
	}
}

func TestRejection(t *testing.T) {
	l, _ := limittest.Fixed(t, "rejection", 1)
	held, err := l.Acquire()
	require.NoError(t, err)
	defer held.Cancel()

	ran := false
	err = failsafe.With(failsafelimit.New[any](l)).Run(func() error { ran = true; return nil })
	require.ErrorIs(t, err, adaptivelimit.ErrLimitExceeded)
	require.False(t, ran, "the function ran past a full limit")

	// A retry told to abort on rejections tries once.
	attempts := 0
	retry := retrypolicy.NewBuilder[any]().AbortOnErrors(adaptivelimit.ErrLimitExceeded).Build()
	err = failsafe.With(retry, failsafelimit.New[any](l)).Run(func() error { attempts++; return nil })
	require.ErrorIs(t, err, adaptivelimit.ErrLimitExceeded)
	require.Equal(t, 0, attempts)
	require.Equal(t, 1, l.InFlight(), "only the held call")
}

// TestAttemptsHoldSlots checks that each attempt of a retry holds a slot while it runs and
// frees it before the next: with a limit of 1, every attempt is admitted.
func TestAttemptsHoldSlots(t *testing.T) {
	l, _ := limittest.Fixed(t, "retry", 1)
	var inFlight []int
	retry := retrypolicy.NewBuilder[any]().WithMaxAttempts(3).Build()
	err := failsafe.With(retry, failsafelimit.New[any](l)).Run(func() error {
		inFlight = append(inFlight, l.InFlight())
		return errBadRequest
	})
	require.ErrorIs(t, err, errBadRequest)
	require.Equal(t, []int{1, 1, 1}, inFlight)
	require.Equal(t, 0, l.InFlight())
}

// TestHedgesHoldSlots checks that a hedge holds a slot of its own beside the attempt it
// hedges, and that the attempt it beat frees its slot when it ends. The hedge's delay runs
// on the real clock: the test waits for the first attempt to start instead of trusting it.
func TestHedgesHoldSlots(t *testing.T) {
	l, _ := limittest.Fixed(t, "hedge", 2)
	hedge := hedgepolicy.NewBuilderWithDelay[any](time.Millisecond).Build()
	var most atomic.Int64
	loserDone := make(chan struct{})
	err := failsafe.With(hedge, failsafelimit.New[any](l)).RunWithExecution(func(exec failsafe.Execution[any]) error {
		if n := int64(l.InFlight()); n > most.Load() {
			most.Store(n)
		}
		if !exec.IsHedge() {
			defer close(loserDone)
			<-exec.Canceled() // the hedge wins, then cancels this attempt
			return exec.Context().Err()
		}
		return nil
	})
	require.NoError(t, err)
	<-loserDone
	limittest.WaitFree(t, l)
	require.Equal(t, int64(2), most.Load())
}

func TestPanicFreesSlot(t *testing.T) {
	l, clock := limittest.Fixed(t, "panic", 1)
	require.PanicsWithValue(t, "boom", func() {
		_ = failsafe.With(failsafelimit.New[any](l)).Run(func() error {
			clock.Advance(time.Second)
			panic("boom")
		})
	})
	require.Equal(t, "none", limittest.Classified(t, l))
}

// TestCheckOnly checks an execution that only asks whether there is room, as failsafegrpc's
// ServerInHandle does: it holds no slot while it runs, and is rejected when the limit is full.
func TestCheckOnly(t *testing.T) {
	l, _ := limittest.Fixed(t, "check", 1)
	ctx := context.WithValue(context.Background(), policy.CheckOnlyKey, true)
	executor := failsafe.With(failsafelimit.New[any](l)).WithContext(ctx)
	require.NoError(t, executor.Run(func() error {
		require.Equal(t, 0, l.InFlight())
		return nil
	}))
	held, err := l.Acquire()
	require.NoError(t, err)
	defer held.Cancel()
	require.ErrorIs(t, executor.Run(func() error { return nil }), adaptivelimit.ErrLimitExceeded)
}

func TestNewNilLimiter(t *testing.T) {
	require.PanicsWithValue(t, "failsafelimit: nil limiter", func() { failsafelimit.New[any](nil) })
}

// TestComposeAny checks that the policy is result-agnostic: a Policy[any] composes with
// executors of any result type.
func TestComposeAny(t *testing.T) {
	l, _ := limittest.Fixed(t, "any", 1)
	limit, ok := failsafelimit.New[any](l).(failsafe.ResultAgnosticPolicy[any])
	require.True(t, ok)
	got, err := failsafe.WithAny[string](limit).Get(func() (string, error) {
		require.Equal(t, 1, l.InFlight())
		return "typed", nil
	})
	require.NoError(t, err)
	require.Equal(t, "typed", got)
	require.Equal(t, 0, l.InFlight())
}
