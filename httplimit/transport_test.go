package httplimit_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/httplimit"
	"github.com/resilience4cata/adaptivelimit/limittest"
)

func TestTransportRejectsWithoutTheNetwork(t *testing.T) {
	l, _ := limittest.Fixed(t, "api", 1)
	var calls atomic.Int64
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
	client := &http.Client{Transport: httplimit.Transport(l, srv.Client().Transport)}
	held, err := l.Acquire()
	require.NoError(t, err)

	_, err = client.Get(srv.URL)
	require.ErrorIs(t, err, adaptivelimit.ErrLimitExceeded)
	var rejected *adaptivelimit.LimitExceededError
	require.ErrorAs(t, err, &rejected)
	require.Equal(t, "api", rejected.InstanceID())
	require.Zero(t, calls.Load(), "no request reached the server")

	held.Done(nil)
	resp, err := client.Get(srv.URL)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, int64(1), calls.Load())
}

// Each way a call can end, and what the limiter makes of it.
func TestTransportClassifies(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		opts   []httplimit.ClientOption
		want   string
	}{
		{"200", 200, nil, "sample"},
		{"304", 304, nil, "sample"},
		{"404", 404, nil, "none"},
		{"400", 400, nil, "none"},
		{"429", 429, nil, "drop"},
		{"503", 503, nil, "drop"},
		{"500", 500, nil, "none"},
		{"custom classifier", 404, []httplimit.ClientOption{httplimit.WithClientOutcome(func(resp *http.Response, err error) adaptivelimit.Outcome {
			return adaptivelimit.Sample
		})}, "sample"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, clock := limittest.Fixed(t, "api", 1)
			srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				clock.Advance(time.Second)
				w.WriteHeader(tc.status)
			}))
			client := &http.Client{Transport: httplimit.Transport(l, srv.Client().Transport, tc.opts...)}
			resp, err := client.Get(srv.URL)
			require.NoError(t, err)
			require.Equal(t, tc.status, resp.StatusCode)
			require.Equal(t, 1, l.InFlight(), "the body holds the slot")
			require.NoError(t, resp.Body.Close())
			require.Equal(t, tc.want, limittest.Classified(t, l))
		})
	}
}

// A call that times out is a drop; one that the caller cancels says nothing about load.
func TestTransportTimeoutsAndCancellation(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(client *http.Client, url string, entered <-chan struct{}) error
		want string
	}{
		{"deadline", func(client *http.Client, url string, entered <-chan struct{}) error {
			ctx := limittest.NewDeadlineContext()
			go func() {
				<-entered
				ctx.Pass()
			}()
			return doWith(client, ctx, url)
		}, "drop"},
		{"canceled", func(client *http.Client, url string, entered <-chan struct{}) error {
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				<-entered
				cancel()
			}()
			return doWith(client, ctx, url)
		}, "none"},
		{"client timeout", func(client *http.Client, url string, entered <-chan struct{}) error {
			client.Timeout = 50 * time.Millisecond // the one real wait: http.Client's own timer
			return doWith(client, context.Background(), url)
		}, "drop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, clock := limittest.Fixed(t, "api", 1)
			entered, release := make(chan struct{}), make(chan struct{})
			srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				clock.Advance(time.Second) // the window is over when the call ends
				close(entered)
				<-release
			}))
			defer close(release)
			client := &http.Client{Transport: httplimit.Transport(l, srv.Client().Transport)}
			err := tc.do(client, srv.URL, entered)
			require.Error(t, err)
			require.Equal(t, tc.want, limittest.Classified(t, l))
		})
	}
}

func doWith(client *http.Client, ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err == nil {
		resp.Body.Close()
		return errors.New("the call succeeded")
	}
	return err
}

// A response holds its slot until its body is closed or read to EOF, and its latency covers
// the body.
func TestTransportBodyHoldsTheSlot(t *testing.T) {
	for _, finish := range []string{"close", "EOF"} {
		t.Run(finish, func(t *testing.T) {
			l, clock := limittest.Fixed(t, "api", 1)
			rest := make(chan struct{})
			srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, "head ")
				w.(http.Flusher).Flush()
				<-rest
				_, _ = io.WriteString(w, "tail")
			}))
			client := &http.Client{Transport: httplimit.Transport(l, srv.Client().Transport)}
			resp, err := client.Get(srv.URL)
			require.NoError(t, err)
			require.Equal(t, 1, l.InFlight(), "the open body holds the slot")
			_, err = client.Get(srv.URL)
			require.ErrorIs(t, err, adaptivelimit.ErrLimitExceeded)

			clock.Advance(time.Second) // the body takes 1 s
			close(rest)
			if finish == "EOF" {
				b, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				require.Equal(t, "head tail", string(b))
			}
			require.Equal(t, "sample", classifiedOrHeld(t, l, resp, finish))
			require.Equal(t, time.Second, l.Snapshot().Last.MeanLatency, "the latency covers the body")
			require.NoError(t, resp.Body.Close(), "a second finish is harmless")
			require.Equal(t, uint64(1), l.Snapshot().Windows)
		})
	}
}

func classifiedOrHeld(t *testing.T, l *adaptivelimit.Limiter, resp *http.Response, finish string) string {
	t.Helper()
	if finish == "close" {
		require.Equal(t, 1, l.InFlight())
		require.NoError(t, resp.Body.Close())
	}
	return limittest.Classified(t, l)
}

// A body read that times out makes the call a drop, whatever its status said.
func TestTransportBodyReadTimesOut(t *testing.T) {
	l, clock := limittest.Fixed(t, "api", 1)
	rest := make(chan struct{})
	defer close(rest)
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		clock.Advance(time.Second)
		_, _ = io.WriteString(w, "head ")
		w.(http.Flusher).Flush()
		<-rest
	}))
	client := &http.Client{Transport: httplimit.Transport(l, srv.Client().Transport)}
	ctx := limittest.NewDeadlineContext()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := client.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	ctx.Pass()
	_, err = io.ReadAll(resp.Body)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, "drop", limittest.Classified(t, l))
	require.NoError(t, resp.Body.Close())
}

// A response without a body, as a custom RoundTripper returns for a 204 or a HEAD, is
// complete: it is classified at once, and what the caller gets reads as an empty body.
func TestTransportNilBody(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		t.Run(method, func(t *testing.T) {
			l, clock := limittest.Fixed(t, "api", 1)
			base := roundTripper(func(r *http.Request) (*http.Response, error) {
				clock.Advance(time.Second)
				return &http.Response{StatusCode: http.StatusNoContent, Request: r}, nil
			})
			client := &http.Client{Transport: httplimit.Transport(l, base)}
			req, err := http.NewRequest(method, "http://127.0.0.1:1/", nil)
			require.NoError(t, err)
			resp, err := client.Do(req)
			require.NoError(t, err)
			require.Equal(t, "sample", limittest.Classified(t, l))
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Empty(t, b)
			require.NoError(t, resp.Body.Close())
		})
	}
}

// A classifier's panic frees the slot and goes on to the caller.
func TestTransportClassifierPanicGoesOn(t *testing.T) {
	l, _ := limittest.Fixed(t, "api", 1)
	srv := newServer(t, http.HandlerFunc(ok))
	client := &http.Client{Transport: httplimit.Transport(l, srv.Client().Transport,
		httplimit.WithClientOutcome(func(*http.Response, error) adaptivelimit.Outcome { panic("classifier") }))}
	require.PanicsWithValue(t, "classifier", func() { _, _ = client.Get(srv.URL) })
	require.Zero(t, l.InFlight())
}
