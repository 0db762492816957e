package adaptivelimit

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDo(t *testing.T) {
	l, clock := newManual(t, Config{InitialLimit: 1, MaxLimit: 1, MinWindowSamples: 1})
	ctx := context.Background()

	v, err := Do(ctx, l, func(context.Context) (string, error) {
		require.Equal(t, 1, l.InFlight(), "fn runs inside the limit")
		_, err := Do(ctx, l, func(context.Context) (int, error) { panic("not called") })
		require.ErrorIs(t, err, ErrLimitExceeded, "the limit is full while fn runs")
		clock.Advance(time.Second)
		return "placed", nil
	})
	require.NoError(t, err)
	require.Equal(t, "placed", v)
	require.Zero(t, l.InFlight())
	require.Equal(t, 1, l.Snapshot().Last.Samples, "the success was a sample")

	failure := errors.New("400 bad request")
	_, err = Do(ctx, l, func(context.Context) (int, error) { return 0, failure })
	require.ErrorIs(t, err, failure)
	require.Zero(t, l.InFlight())
}

func TestDoPanicFreesTheSlot(t *testing.T) {
	l, _ := newManual(t, Config{InitialLimit: 1, MaxLimit: 1})
	require.PanicsWithValue(t, "boom", func() {
		_, _ = Do(context.Background(), l, func(context.Context) (int, error) { panic("boom") })
	})
	require.Zero(t, l.InFlight())
	v, err := Do(context.Background(), l, func(context.Context) (int, error) { return 7, nil })
	require.NoError(t, err)
	require.Equal(t, 7, v)
}

func TestDoDoneContext(t *testing.T) {
	l, _ := newManual(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Do(ctx, l, func(context.Context) (int, error) { panic("not called") })
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, l.InFlight())
}

// A per-call timeout inside the limit is the overload signal: its DeadlineExceeded is a drop
// and its latency (the timeout) is a sample.
func TestDoTimeoutInsideIsADrop(t *testing.T) {
	l, clock := newManual(t, Config{Algorithm: AIMD, MinWindowSamples: 1})
	_, err := Do(context.Background(), l, func(ctx context.Context) (int, error) {
		ctx, cancel := context.WithTimeout(ctx, time.Nanosecond)
		defer cancel()
		clock.Advance(time.Second)
		<-ctx.Done()
		return 0, ctx.Err()
	})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Positive(t, l.Snapshot().Last.Drops)
	require.Equal(t, 18, l.Limit())
}
