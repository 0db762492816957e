package grpclimit_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/grpclimit"
	"github.com/resilience4cata/adaptivelimit/limittest"
)

// dropCodes are the codes that every integration counts as drops; connectlimit's test keeps
// the same list, by the codes' numbers, which connect shares with gRPC.
var dropCodes = map[codes.Code]bool{codes.DeadlineExceeded: true, codes.ResourceExhausted: true, codes.Unavailable: true}

// DropOn, which the core's Config.DropOn takes, counts exactly what DefaultOutcome counts
// as drops, for every code, also wrapped and as a context's error.
func TestDropOn(t *testing.T) {
	require.False(t, grpclimit.DropOn(nil))
	require.Equal(t, adaptivelimit.Sample, grpclimit.DefaultOutcome(nil))
	for c := codes.Code(1); c <= 16; c++ {
		err := fmt.Errorf("call: %w", status.Error(c, "x"))
		want := adaptivelimit.Outcome(adaptivelimit.Ignore)
		if dropCodes[c] {
			want = adaptivelimit.Drop
		}
		require.Equal(t, dropCodes[c], grpclimit.DropOn(err), "%v", c)
		require.Equal(t, want, grpclimit.DefaultOutcome(err), "%v", c)
	}
	require.True(t, grpclimit.DropOn(context.DeadlineExceeded))
	require.False(t, grpclimit.DropOn(context.Canceled))

	// Do, with DropOn in the Config, counts a call's DeadlineExceeded as the interceptors do.
	l, err := adaptivelimit.New(adaptivelimit.Config{DropOn: grpclimit.DropOn})
	require.NoError(t, err)
	_, _ = adaptivelimit.Do(context.Background(), l, func(context.Context) (any, error) {
		return nil, status.Error(codes.DeadlineExceeded, "late")
	})
	require.Equal(t, uint64(1), l.Snapshot().Drops)
}

// A MetadataClass value that names no class of the limiter, or a name that gRPC cannot
// carry, panics when the interceptor is built, naming the value.
func TestMetadataClassChecked(t *testing.T) {
	l := limittest.Classed(t, "echo", 2)
	require.PanicsWithValue(t, `grpclimit: MetadataClass maps to class "Critical", which limiter "echo" lacks (its classes: ["critical" "batch"])`, func() {
		grpclimit.UnaryServerInterceptor(l, grpclimit.WithClassFrom(grpclimit.MetadataClass("x-criticality", map[string]string{"high": "Critical"}, trustAll)))
	})
	require.PanicsWithValue(t, `grpclimit: MetadataClass maps to class "café", whose name breaks the rule of class names`, func() {
		grpclimit.StreamServerInterceptor(l, grpclimit.WithClassFrom(grpclimit.MetadataClass("x-criticality", map[string]string{"high": "café"}, trustAll)))
	})
}

// A context's class that gRPC cannot carry in metadata is not sent: the call does not fail
// for it, and is no drop.
func TestUnsendableClassNotSent(t *testing.T) {
	var seen []string
	e := &echo{answer: func(ctx context.Context, _ string) error {
		md, _ := metadata.FromIncomingContext(ctx)
		seen = append(seen, fmt.Sprint(md.Get(grpclimit.DefaultClassMetadata)))
		return nil
	}}
	l, _ := limittest.Fixed(t, "client", 2)
	cc := dial(t, "tcp", e, nil, grpc.WithUnaryInterceptor(grpclimit.UnaryClientInterceptor(l)),
		grpc.WithStreamInterceptor(grpclimit.StreamClientInterceptor(l)))
	for _, class := range []string{"critical", "café", "a\r\nb", "nul\x00"} {
		require.NoError(t, unary(adaptivelimit.WithClass(context.Background(), class), cc, "hi"), "class %q", class)
	}
	require.Equal(t, []string{"[critical]", "[]", "[]", "[]"}, seen)
	s := l.Snapshot()
	require.Equal(t, uint64(4), s.Successes)
	require.Zero(t, s.Drops)

	// No limiter can have such a class: a classed one counts it.
	classed := limittest.Classed(t, "classed", 2)
	cc = dial(t, "tcp", e, nil, grpc.WithUnaryInterceptor(grpclimit.UnaryClientInterceptor(classed)))
	require.NoError(t, unary(adaptivelimit.WithClass(context.Background(), "café"), cc, "hi"))
	require.Equal(t, "[]", seen[4])
	require.Equal(t, uint64(1), classed.Snapshot().UnknownClass)
}

// A call whose context is done before it asks for a slot fails with its context's code,
// not the rejection code, and is no rejection.
func TestDoneContextIsNoRejection(t *testing.T) {
	l, _ := limittest.Fixed(t, "client", 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := grpclimit.UnaryClientInterceptor(l)(ctx, "/x/y", nil, nil, nil,
		func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil })
	require.Equal(t, codes.Canceled, status.Code(err), "%v", err)
	require.False(t, errors.Is(err, adaptivelimit.ErrLimitExceeded))
	require.Zero(t, l.Snapshot().Rejected)
}
