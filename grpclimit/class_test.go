package grpclimit_test

import (
	"context"
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/grpclimit"
	"github.com/resilience4cata/adaptivelimit/limittest"
)

// The client interceptors send the context's class in x-criticality; a server that lists
// the value takes the call's slot for that class, and its handler's context carries it.
// Values it does not list are the lowest class.
func TestClassesThroughMetadata(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			server := limittest.Classed(t, "server", 2)
			classOf := grpclimit.WithClassFrom(grpclimit.MetadataClass(grpclimit.DefaultClassMetadata, map[string]string{"critical": "critical"}, trustAll))
			var seen []string
			e := &echo{answer: func(ctx context.Context, msg string) error {
				class, _ := adaptivelimit.ClassFromContext(ctx)
				seen = append(seen, msg+"="+class)
				return nil
			}}
			client := limittest.Classed(t, "client", 2)
			cc := dial(t, network, e, []grpc.ServerOption{
				grpc.UnaryInterceptor(grpclimit.UnaryServerInterceptor(server, classOf)),
				grpc.StreamInterceptor(grpclimit.StreamServerInterceptor(server, classOf)),
			}, grpc.WithUnaryInterceptor(grpclimit.UnaryClientInterceptor(client)),
				grpc.WithStreamInterceptor(grpclimit.StreamClientInterceptor(client)))
			held, err := server.Acquire() // the shared slot
			require.NoError(t, err)
			critical := adaptivelimit.WithClass(context.Background(), "critical")

			require.NoError(t, unary(critical, cc, "unary"))
			cs, err := cc.NewStream(critical, &bidiDesc, bidiMethod)
			require.NoError(t, err)
			require.NoError(t, cs.SendMsg(wrapperspb.String("x")))
			require.NoError(t, cs.RecvMsg(new(wrapperspb.StringValue)))
			require.NoError(t, cs.CloseSend())
			require.ErrorIs(t, cs.RecvMsg(new(wrapperspb.StringValue)), io.EOF)
			for _, ctx := range []context.Context{
				context.Background(),
				metadata.AppendToOutgoingContext(context.Background(), grpclimit.DefaultClassMetadata, "0"),
				metadata.AppendToOutgoingContext(context.Background(), grpclimit.DefaultClassMetadata, "Critical"),
				adaptivelimit.WithClass(context.Background(), "batch"),
			} {
				err := unary(ctx, cc, "shed")
				require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
			}
			require.Equal(t, []string{"unary=critical", "end=critical"}, seen)
			require.Equal(t, uint64(4), server.Snapshot().Classes[1].Rejected)
			held.Done(nil)
			require.Zero(t, client.InFlight())
			require.Eventually(t, func() bool { return server.InFlight() == 0 }, 5e9, 1e6)
		})
	}
}

// Health checks bypass the limit by default, on servers and clients, and are not measured;
// WithBypass replaces the default.
func TestBypass(t *testing.T) {
	server, client := limittest.Classed(t, "server", 2), limittest.Classed(t, "client", 2)
	srv := grpc.NewServer(
		grpc.UnaryInterceptor(grpclimit.UnaryServerInterceptor(server)),
		grpc.StreamInterceptor(grpclimit.StreamServerInterceptor(server)))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	srv.RegisterService(&echoDesc, &echo{answer: func(context.Context, string) error { return nil }})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	echoOnly := grpclimit.WithBypass(func(_ context.Context, method string) bool { return method == unaryMethod })
	cc, err := grpc.NewClient("passthrough:///"+lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(grpclimit.UnaryClientInterceptor(client, echoOnly)),
		grpc.WithChainStreamInterceptor(grpclimit.StreamClientInterceptor(client, echoOnly)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = cc.Close() })

	freeServer, freeClient := limittest.HoldClassed(t, server), limittest.HoldClassed(t, client)
	_, err = healthpb.NewHealthClient(cc).Check(context.Background(), &healthpb.HealthCheckRequest{})
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "the client's bypass replaces the default: %v", err)
	err = unary(context.Background(), cc, "hi")
	require.ErrorContains(t, err, `limit of "server" exceeded`, "the client bypasses it; the server rejects it")
	freeClient()

	resp, err := healthpb.NewHealthClient(cc).Check(context.Background(), &healthpb.HealthCheckRequest{})
	require.NoError(t, err, "the server bypasses health checks")
	require.Equal(t, healthpb.HealthCheckResponse_SERVING, resp.GetStatus())
	watch, err := healthpb.NewHealthClient(cc).Watch(context.Background(), &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	_, err = watch.Recv()
	require.NoError(t, err, "streams too")
	require.Equal(t, uint64(1), server.Snapshot().Rejected, "the echo call only")
	freeServer()
	require.Zero(t, server.Snapshot().Windows)
}

// WithClassMetadata("") sends no class; the client's own slot is still taken for it.
func TestNoClassMetadata(t *testing.T) {
	var got []string
	e := &echo{answer: func(ctx context.Context, _ string) error {
		got = append(got, metadata.ValueFromIncomingContext(ctx, grpclimit.DefaultClassMetadata)...)
		return nil
	}}
	client := limittest.Classed(t, "client", 2)
	cc := dial(t, "bufconn", e, nil, grpc.WithUnaryInterceptor(grpclimit.UnaryClientInterceptor(client, grpclimit.WithClassMetadata(""))))
	held, err := client.Acquire()
	require.NoError(t, err)
	require.NoError(t, unary(adaptivelimit.WithClass(context.Background(), "critical"), cc, "hi"))
	require.Error(t, unary(context.Background(), cc, "hi"))
	require.Empty(t, got)
	held.Done(nil)
}
