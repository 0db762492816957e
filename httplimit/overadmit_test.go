package httplimit_test

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/httplimit"
	"github.com/resilience4cata/adaptivelimit/limittest"
)

// Under 64 concurrent clients a fixed limit of 4, on either side, lets exactly 4 requests in
// while they run and rejects the others at once; and a free-running load never finds more
// than 4 handlers running.
func TestNeverOverAdmits(t *testing.T) {
	const limit, clients, rounds = 4, 64, 20
	for _, side := range []string{"Middleware", "Transport"} {
		t.Run(side, func(t *testing.T) {
			l, _ := limittest.Fixed(t, "api", limit)
			var inside, most atomic.Int64
			var gate atomic.Pointer[chan struct{}]
			entered := make(chan struct{}, clients)
			var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := inside.Add(1)
				defer inside.Add(-1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				if g := gate.Load(); g != nil {
					entered <- struct{}{}
					<-*g
				}
			})
			if side == "Middleware" {
				h = httplimit.Middleware(l)(h)
			}
			srv := newServer(t, h)
			tr := srv.Client().Transport.(*http.Transport).Clone()
			tr.MaxIdleConnsPerHost = clients
			client := &http.Client{Transport: tr}
			if side == "Transport" {
				client.Transport = httplimit.Transport(l, tr)
			}
			// admitted reports whether a request got in, failing the test on anything but
			// a rejection.
			admitted := func() bool {
				resp, err := client.Get(srv.URL)
				if errors.Is(err, adaptivelimit.ErrLimitExceeded) {
					return false
				}
				if err != nil {
					t.Error(err)
					return false
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode == http.StatusServiceUnavailable {
					return false
				}
				if resp.StatusCode != http.StatusOK {
					t.Errorf("status %d", resp.StatusCode)
				}
				return true
			}

			held := make(chan struct{})
			gate.Store(&held)
			release := sync.OnceFunc(func() { close(held) })
			t.Cleanup(release) // before the server's Close, which waits for the handlers
			results := make(chan bool, clients)
			var wg sync.WaitGroup
			for range clients {
				wg.Go(func() { results <- admitted() })
			}
			for range clients - limit { // all but the admitted are answered while they run
				require.False(t, <-results)
			}
			for range limit {
				<-entered
			}
			require.Equal(t, int64(limit), inside.Load())
			gate.Store(nil)
			release()
			wg.Wait()
			for range limit {
				require.True(t, <-results)
			}

			var in atomic.Int64
			for range clients {
				wg.Go(func() {
					for range rounds {
						if admitted() {
							in.Add(1)
						}
					}
				})
			}
			wg.Wait()
			require.LessOrEqual(t, most.Load(), int64(limit))
			require.Positive(t, in.Load())
			require.Zero(t, l.InFlight())
		})
	}
}
