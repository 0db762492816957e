package integration

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/resilience4cata/adaptivelimit"
)

func streamLimiter(t *testing.T) (*adaptivelimit.Limiter, *adaptivelimit.ManualClock) {
	clock := adaptivelimit.NewManualClock()
	l, err := adaptivelimit.New(adaptivelimit.Config{Name: "stream", InitialLimit: 1, MinLimit: 1, MaxLimit: 1, MinWindowSamples: 1, Clock: clock})
	require.NoError(t, err)
	return l, clock
}

// The first end of a stream finishes its permit, whichever goroutine sees it; the others do
// nothing, and the slot comes back once.
func TestStreamPermitFinishesOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(s *StreamPermit, cancel context.CancelFunc)
		want uint64 // samples
	}{
		{"end", func(s *StreamPermit, _ context.CancelFunc) { s.End(nil) }, 1},
		{"end with an error", func(s *StreamPermit, _ context.CancelFunc) { s.End(errors.New("drop")) }, 1},
		{"cancel", func(s *StreamPermit, _ context.CancelFunc) { s.Cancel() }, 0},
		{"everything at once", func(s *StreamPermit, cancel context.CancelFunc) {
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() { s.End(nil) })
				wg.Go(s.Cancel)
				wg.Go(cancel)
			}
			wg.Wait()
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, clock := streamLimiter(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			p, err := l.Acquire()
			require.NoError(t, err)
			s := NewStreamPermit(ctx, &p, func(error) adaptivelimit.Outcome { return adaptivelimit.Drop })
			clock.Advance(time.Second)
			tc.end(s, cancel)
			s.End(nil) // later ends do nothing
			s.Cancel()
			cancel()
			require.Eventually(t, func() bool { return l.InFlight() == 0 }, 5*time.Second, time.Millisecond)
			snap := l.Snapshot()
			if tc.name != "everything at once" {
				require.Equal(t, tc.want, snap.Successes+snap.Drops)
			}
			require.LessOrEqual(t, snap.Successes+snap.Drops+snap.Cancelled, uint64(1), "finished once")
			_, err = l.Acquire()
			require.NoError(t, err, "the slot came back")
		})
	}
}

// A stream whose context ends is finished with the context's error, classified; a classify
// that panics there frees the slot, and the process lives.
func TestStreamPermitContextDone(t *testing.T) {
	for _, classify := range []func(error) adaptivelimit.Outcome{
		func(err error) adaptivelimit.Outcome {
			if errors.Is(err, context.Canceled) {
				return adaptivelimit.Drop
			}
			return adaptivelimit.Sample
		},
		func(error) adaptivelimit.Outcome { panic("classify") },
	} {
		l, _ := streamLimiter(t)
		ctx, cancel := context.WithCancel(context.Background())
		p, err := l.Acquire()
		require.NoError(t, err)
		NewStreamPermit(ctx, &p, classify)
		cancel()
		require.Eventually(t, func() bool { return l.InFlight() == 0 }, 5*time.Second, time.Millisecond)
		require.Eventually(t, func() bool { s := l.Snapshot(); return s.Drops+s.Cancelled == 1 }, 5*time.Second, time.Millisecond)
	}
}

// End's classify that panics frees the slot, and the panic goes on to End's caller.
func TestStreamPermitEndPanics(t *testing.T) {
	l, _ := streamLimiter(t)
	p, err := l.Acquire()
	require.NoError(t, err)
	s := NewStreamPermit(context.Background(), &p, func(error) adaptivelimit.Outcome { panic("classify") })
	require.PanicsWithValue(t, "classify", func() { s.End(errors.New("x")) })
	require.Equal(t, 0, l.InFlight())
}

// A receive ends the stream at io.EOF (a sample), at an error (classified) and, where the
// server sends one message, at that message; a send ends it at an error other than io.EOF.
func TestStreamPermitReceivedSent(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(s *StreamPermit)
		want string // "sample", "drop" or "open"
	}{
		{"received EOF", func(s *StreamPermit) { s.Received(io.EOF, false) }, "sample"},
		{"received an error", func(s *StreamPermit) { s.Received(errors.New("x"), false) }, "drop"},
		{"received a message", func(s *StreamPermit) { s.Received(nil, false) }, "open"},
		{"received the one message", func(s *StreamPermit) { s.Received(nil, true) }, "sample"},
		{"sent", func(s *StreamPermit) { s.Sent(nil) }, "open"},
		{"sent to a stream that is over", func(s *StreamPermit) { s.Sent(io.EOF) }, "open"},
		{"send failed", func(s *StreamPermit) { s.Sent(errors.New("x")) }, "drop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, clock := streamLimiter(t)
			p, err := l.Acquire()
			require.NoError(t, err)
			s := NewStreamPermit(context.Background(), &p, func(error) adaptivelimit.Outcome { return adaptivelimit.Drop })
			clock.Advance(time.Second)
			tc.end(s)
			snap := l.Snapshot()
			switch tc.want {
			case "open":
				require.Equal(t, 1, l.InFlight())
			case "sample":
				require.Equal(t, uint64(1), snap.Successes)
			case "drop":
				require.Equal(t, uint64(1), snap.Drops)
			}
			s.Cancel()
			require.Equal(t, 0, l.InFlight())
		})
	}
}
