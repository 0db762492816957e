package connectlimit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/connectlimit"
	"github.com/resilience4cata/adaptivelimit/limittest"
)

// dropCodes are the codes that every integration counts as drops, by the numbers that
// connect shares with gRPC: DeadlineExceeded (4), ResourceExhausted (8), Unavailable (14).
// grpclimit's test keeps the same list, so that the two agree on every code.
var dropCodes = map[connect.Code]bool{4: true, 8: true, 14: true}

// DropOn, which the core's Config.DropOn takes, counts exactly what DefaultOutcome counts
// as drops, for every code, also wrapped and as a context's error.
func TestDropOn(t *testing.T) {
	require.False(t, connectlimit.DropOn(nil))
	require.Equal(t, adaptivelimit.Sample, connectlimit.DefaultOutcome(nil))
	for c := connect.Code(1); c <= 16; c++ {
		err := fmt.Errorf("call: %w", connect.NewError(c, errors.New("x")))
		want := adaptivelimit.Outcome(adaptivelimit.Ignore)
		if dropCodes[c] {
			want = adaptivelimit.Drop
		}
		require.Equal(t, dropCodes[c], connectlimit.DropOn(err), "%v", c)
		require.Equal(t, want, connectlimit.DefaultOutcome(err), "%v", c)
	}
	require.True(t, connectlimit.DropOn(context.DeadlineExceeded))
	require.False(t, connectlimit.DropOn(context.Canceled))

	l, err := adaptivelimit.New(adaptivelimit.Config{DropOn: connectlimit.DropOn})
	require.NoError(t, err)
	_, _ = adaptivelimit.Do(context.Background(), l, func(context.Context) (any, error) {
		return nil, connect.NewError(connect.CodeDeadlineExceeded, errors.New("late"))
	})
	require.Equal(t, uint64(1), l.Snapshot().Drops)
}

// A HeaderClass value that names no class of the limiter, or a name that no wire carries,
// panics when the interceptor is built, naming the value.
func TestHeaderClassChecked(t *testing.T) {
	l := limittest.Classed(t, "say", 2)
	require.PanicsWithValue(t, `connectlimit: HeaderClass maps to class "Critical", which limiter "say" lacks (its classes: ["critical" "batch"])`, func() {
		connectlimit.NewInterceptor(l, connectlimit.WithClassFrom(connectlimit.HeaderClass("x-criticality", map[string]string{"high": "Critical"}, trustLoopback)))
	})
	require.PanicsWithValue(t, `connectlimit: HeaderClass maps to class "a\r\nb", whose name breaks the rule of class names`, func() {
		connectlimit.NewInterceptor(l, connectlimit.WithClassFrom(connectlimit.HeaderClass("x-criticality", map[string]string{"high": "a\r\nb"}, trustLoopback)))
	})
}

// A context's class that the wire cannot carry (CR LF, NUL, DEL, non-ASCII) is not sent: the
// call does not fail in the client for it, and is no drop, on every protocol.
func TestUnsendableClassNotSent(t *testing.T) {
	var seen []string
	url, hc := serveHandlers(t, map[string]http.Handler{sayProcedure: connect.NewUnaryHandler(sayProcedure,
		func(_ context.Context, r *connect.Request[msg]) (*connect.Response[msg], error) {
			seen = append(seen, r.Header().Get(connectlimit.DefaultClassHeader))
			return connect.NewResponse(&msg{}), nil
		})})
	for _, protocol := range protocols {
		seen = nil
		l, _ := limittest.Fixed(t, "client", 2)
		c := newClients(url, hc, append([]connect.ClientOption{connect.WithInterceptors(connectlimit.NewInterceptor(l))}, protocol.opts...)...)
		for _, class := range []string{"critical", "a\r\nb", "nul\x00", "del\x7f", "café"} {
			_, err := c.callSay(adaptivelimit.WithClass(context.Background(), class), "")
			require.NoError(t, err, "%s: class %q", protocol.name, class)
		}
		require.Equal(t, []string{"critical", "", "", "", ""}, seen, protocol.name)
		s := l.Snapshot()
		require.Equal(t, uint64(5), s.Successes, protocol.name)
		require.Zero(t, s.Drops, protocol.name)
	}

	// No limiter can have such a class: a classed one counts it.
	classed := limittest.Classed(t, "classed", 2)
	c := newClients(url, hc, connect.WithInterceptors(connectlimit.NewInterceptor(classed)))
	_, err := c.callSay(adaptivelimit.WithClass(context.Background(), "del\x7f"), "")
	require.NoError(t, err)
	require.Equal(t, uint64(1), classed.Snapshot().UnknownClass)
}
