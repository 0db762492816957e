package grpclimit_test

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/grpclimit"
)

// trustAll trusts every caller's class, for the tests that reach the server over bufconn,
// whose peer has no IP address.
func trustAll(context.Context) bool { return true }

var trustLoopback = grpclimit.TrustNetworks(netip.MustParsePrefix("127.0.0.0/8"))

// readme is a limiter with the classes of the README's "Priorities" section.
func readme(t *testing.T, name string) *adaptivelimit.Limiter {
	t.Helper()
	l, err := adaptivelimit.New(adaptivelimit.Config{Name: name, Classes: []adaptivelimit.Class{
		{Name: "critical", Reserve: 0.3}, {Name: "standard", Reserve: 0.4}, {Name: "sheddable"},
	}})
	require.NoError(t, err)
	return l
}

// recorder is an echo service that records, for each call, the class of its context and
// the class metadata it received, as "class|[values]".
type recorder struct {
	mu   sync.Mutex
	seen []string
}

func (r *recorder) echo() *echo {
	return &echo{answer: func(ctx context.Context, _ string) error {
		class, _ := adaptivelimit.ClassFromContext(ctx)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.seen = append(r.seen, fmt.Sprintf("%s|%v", class, metadata.ValueFromIncomingContext(ctx, grpclimit.DefaultClassMetadata)))
		return nil
	}}
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := r.seen
	r.seen = nil
	return seen
}

// bidiIn runs a Bidi stream of one message in ctx to its end.
func bidiIn(t *testing.T, ctx context.Context, cc *grpc.ClientConn) {
	t.Helper()
	cs, err := cc.NewStream(ctx, &bidiDesc, bidiMethod)
	require.NoError(t, err)
	require.NoError(t, cs.SendMsg(wrapperspb.String("x")))
	require.NoError(t, cs.RecvMsg(new(wrapperspb.StringValue)))
	require.NoError(t, cs.CloseSend())
	require.ErrorIs(t, cs.RecvMsg(new(wrapperspb.StringValue)), io.EOF)
}

// A client outside the trusted network that sends x-criticality: critical is served as the
// lowest class, on unary calls and streams; one inside it, as critical.
func TestUntrustedClientCannotPromoteItself(t *testing.T) {
	allowed := map[string]string{"critical": "critical", "standard": "standard"}
	for _, tc := range []struct {
		name    string
		trusted func(context.Context) bool
		want    string
	}{
		{"outside 10.0.0.0/8", grpclimit.TrustNetworks(netip.MustParsePrefix("10.0.0.0/8")), "|[critical]"},
		{"no network", grpclimit.TrustNetworks(), "|[critical]"},
		{"inside 127.0.0.0/8", trustLoopback, "critical|[critical]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := readme(t, "api")
			classOf := grpclimit.WithClassFrom(grpclimit.MetadataClass(grpclimit.DefaultClassMetadata, allowed, tc.trusted))
			var rec recorder
			cc := dial(t, "tcp", rec.echo(), []grpc.ServerOption{
				grpc.UnaryInterceptor(grpclimit.UnaryServerInterceptor(l, classOf)),
				grpc.StreamInterceptor(grpclimit.StreamServerInterceptor(l, classOf)),
			})
			ctx := metadata.AppendToOutgoingContext(context.Background(), grpclimit.DefaultClassMetadata, "critical")
			require.NoError(t, unary(ctx, cc, "hi"))
			bidiIn(t, ctx, cc)
			require.Equal(t, []string{tc.want, tc.want}, rec.take())
		})
	}
}

// A proxy whose handler passes its caller's metadata on to the backend, as a gRPC proxy
// does, through the client interceptor: its server interceptor lists only gold and trusts
// only callers with the partner's token, so an outside client is the lowest class there,
// and the class it wrote is not passed on to the backend, which trusts the proxy's network
// and would grant it. The gold of a trusted caller is passed on.
func TestProxyDoesNotPassOnClientClass(t *testing.T) {
	proxyLimiter, err := adaptivelimit.New(adaptivelimit.Config{Name: "proxy", Classes: []adaptivelimit.Class{
		{Name: "gold", Reserve: 0.5}, {Name: "standard"},
	}})
	require.NoError(t, err)
	var rec recorder
	toBackend := dial(t, "tcp", rec.echo(), []grpc.ServerOption{grpc.UnaryInterceptor(grpclimit.UnaryServerInterceptor(readme(t, "backend"),
		grpclimit.WithClassFrom(grpclimit.MetadataClass(grpclimit.DefaultClassMetadata,
			map[string]string{"critical": "critical", "gold": "standard"}, trustLoopback))))},
		grpc.WithUnaryInterceptor(grpclimit.UnaryClientInterceptor(proxyLimiter)))

	partner := func(ctx context.Context) bool {
		v := metadata.ValueFromIncomingContext(ctx, "authorization")
		return len(v) == 1 && v[0] == "Bearer partner"
	}
	forward := &echo{answer: func(ctx context.Context, msg string) error {
		md, _ := metadata.FromIncomingContext(ctx)
		return unary(metadata.NewOutgoingContext(ctx, md), toBackend, msg)
	}}
	toProxy := dial(t, "tcp", forward, []grpc.ServerOption{grpc.UnaryInterceptor(grpclimit.UnaryServerInterceptor(proxyLimiter,
		grpclimit.WithClassFrom(grpclimit.MetadataClass(grpclimit.DefaultClassMetadata, map[string]string{"gold": "gold"}, partner))))})

	for _, md := range [][]string{
		{grpclimit.DefaultClassMetadata, "critical"}, // not listed by the proxy
		{grpclimit.DefaultClassMetadata, "gold"},     // listed, but not trusted
		{grpclimit.DefaultClassMetadata, "gold", "authorization", "Bearer partner"},
	} {
		require.NoError(t, unary(metadata.AppendToOutgoingContext(context.Background(), md...), toProxy, "hi"), "%v", md)
	}
	require.Equal(t, []string{"|[]", "|[]", "standard|[gold]"}, rec.take())
}

// The client interceptors send the context's class in place of any value the outgoing
// metadata holds, and remove the key from the metadata of a call whose context has none,
// bypassed or not.
func TestClientReplacesClassMetadata(t *testing.T) {
	var rec recorder
	client := readme(t, "client")
	bypassStreams := grpclimit.WithBypass(func(_ context.Context, method string) bool { return method == bidiMethod })
	cc := dial(t, "tcp", rec.echo(), nil,
		grpc.WithUnaryInterceptor(grpclimit.UnaryClientInterceptor(client)),
		grpc.WithStreamInterceptor(grpclimit.StreamClientInterceptor(client, bypassStreams)))
	forged := metadata.AppendToOutgoingContext(context.Background(), grpclimit.DefaultClassMetadata, "critical")
	for _, ctx := range []context.Context{
		forged,
		adaptivelimit.WithClass(forged, "standard"),
		adaptivelimit.WithClass(metadata.NewOutgoingContext(context.Background(), metadata.Pairs("X-Criticality", "critical")), "standard"),
		adaptivelimit.WithClass(metadata.AppendToOutgoingContext(context.Background(), grpclimit.DefaultClassMetadata, "standard"), "standard"),
		adaptivelimit.WithClass(context.Background(), "standard"),
	} {
		require.NoError(t, unary(ctx, cc, "hi"))
		bidiIn(t, ctx, cc)
	}
	require.Equal(t, []string{"|[]", "|[]",
		"|[standard]", "|[standard]", "|[standard]", "|[standard]", "|[standard]", "|[standard]", "|[standard]", "|[standard]"}, rec.take())
}

// MetadataClass without its trusted panics when the interceptor is built; TrustNetworks
// panics on a network that is not valid.
func TestMetadataClassNeedsTrust(t *testing.T) {
	l := readme(t, "api")
	classOf := grpclimit.WithClassFrom(grpclimit.MetadataClass(grpclimit.DefaultClassMetadata, map[string]string{"critical": "critical"}, nil))
	require.PanicsWithValue(t, "grpclimit: MetadataClass with a nil trusted", func() { grpclimit.UnaryServerInterceptor(l, classOf) })
	require.PanicsWithValue(t, "grpclimit: MetadataClass with a nil trusted", func() { grpclimit.StreamServerInterceptor(l, classOf) })
	require.PanicsWithValue(t, "grpclimit: TrustNetworks: network 0 (invalid Prefix) is not valid", func() {
		grpclimit.TrustNetworks(netip.Prefix{})
	})
}
