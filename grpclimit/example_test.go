package grpclimit_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/grpclimit"
)

// Shed load: a call that finds the server's limit full gets RESOURCE_EXHAUSTED and a pushback
// hint at once.
func ExampleUnaryServerInterceptor() {
	limiter, _ := adaptivelimit.New(adaptivelimit.Config{Name: "health", InitialLimit: 1, MaxLimit: 1})
	// The health service stands in for an application's here: by default it bypasses the limit.
	noBypass := grpclimit.WithBypass(func(context.Context, string) bool { return false })
	srv := grpc.NewServer(
		grpc.ChainUnaryInterceptor(grpclimit.UnaryServerInterceptor(limiter, noBypass)),
		grpc.ChainStreamInterceptor(grpclimit.StreamServerInterceptor(limiter, noBypass)),
	)
	healthpb.RegisterHealthServer(srv, health.NewServer())
	lis, _ := net.Listen("tcp", "127.0.0.1:0")
	go srv.Serve(lis)
	defer srv.Stop()

	cc, _ := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	defer cc.Close()
	client := healthpb.NewHealthClient(cc)

	permit, _ := limiter.Acquire() // another call holds the only slot
	var trailer metadata.MD
	_, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{}, grpc.Trailer(&trailer))
	fmt.Println(status.Code(err), trailer.Get(grpclimit.PushbackKey))
	permit.Done(nil)

	resp, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{})
	fmt.Println(resp.GetStatus(), err)
	// Output:
	// ResourceExhausted [1000]
	// SERVING <nil>
}

// Limit the calls to a dependency: a full limit fails the call without sending it.
func ExampleUnaryClientInterceptor() {
	limiter, _ := adaptivelimit.New(adaptivelimit.Config{Name: "inventory", InitialLimit: 1, MaxLimit: 1})
	// The health service stands in for an application's here: by default it bypasses the limit.
	noBypass := grpclimit.WithBypass(func(context.Context, string) bool { return false })
	cc, _ := grpc.NewClient("passthrough:///inventory.internal:443", // never dialed here
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(grpclimit.UnaryClientInterceptor(limiter, noBypass)),
		grpc.WithChainStreamInterceptor(grpclimit.StreamClientInterceptor(limiter, noBypass)),
	)
	defer cc.Close()

	permit, _ := limiter.Acquire() // another call holds the only slot
	_, err := healthpb.NewHealthClient(cc).Check(context.Background(), &healthpb.HealthCheckRequest{})
	fmt.Println(status.Code(err), errors.Is(err, adaptivelimit.ErrLimitExceeded))
	permit.Done(nil)
	// Output:
	// ResourceExhausted true
}

// A client sends the class of each call's context in the x-criticality metadata, and takes
// its own slot for it; the server's MetadataClass reads it. The gRPC health service takes no
// slot on either side (DefaultBypass).
func ExampleMetadataClass() {
	classes := []adaptivelimit.Class{{Name: "critical", Reserve: 0.5}, {Name: "sheddable"}}
	server, _ := adaptivelimit.New(adaptivelimit.Config{Name: "greeter", InitialLimit: 2, MinLimit: 2, MaxLimit: 2, Classes: classes})
	classOf := grpclimit.WithClassFrom(grpclimit.MetadataClass(grpclimit.DefaultClassMetadata, map[string]string{"critical": "critical"}, grpclimit.TrustNetworks(netip.MustParsePrefix("127.0.0.0/8"))))
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(grpclimit.UnaryServerInterceptor(server, classOf)))
	srv.RegisterService(&greeterDesc, nil)
	healthpb.RegisterHealthServer(srv, health.NewServer())
	lis, _ := net.Listen("tcp", "127.0.0.1:0")
	go srv.Serve(lis)
	defer srv.Stop()

	client, _ := adaptivelimit.New(adaptivelimit.Config{Name: "greeter-client", Classes: classes})
	cc, _ := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(grpclimit.UnaryClientInterceptor(client)))
	defer cc.Close()

	shared, _ := server.Acquire() // a sheddable call holds the server's shared slot
	defer shared.Done(nil)
	for _, class := range []string{"critical", "sheddable"} {
		ctx := adaptivelimit.WithClass(context.Background(), class)
		reply := new(wrapperspb.StringValue)
		err := cc.Invoke(ctx, "/greet.Greeter/Greet", wrapperspb.String("ada"), reply)
		fmt.Println(class+":", reply.GetValue(), status.Code(err))
		resp, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{})
		fmt.Println(class+": health", resp.GetStatus(), status.Code(err))
	}
	// Output:
	// critical: hello, ada, as critical OK
	// critical: health SERVING OK
	// sheddable:  ResourceExhausted
	// sheddable: health SERVING OK
}

// greeterDesc is a service with one unary method, Greet, whose answer names the call's class.
var greeterDesc = grpc.ServiceDesc{
	ServiceName: "greet.Greeter",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Greet", Handler: func(_ any, ctx context.Context, dec func(any) error, in grpc.UnaryServerInterceptor) (any, error) {
		req := new(wrapperspb.StringValue)
		if err := dec(req); err != nil {
			return nil, err
		}
		greet := func(ctx context.Context, req any) (any, error) {
			class, _ := adaptivelimit.ClassFromContext(ctx)
			return wrapperspb.String("hello, " + req.(*wrapperspb.StringValue).GetValue() + ", as " + class), nil
		}
		return in(ctx, req, &grpc.UnaryServerInfo{FullMethod: "/greet.Greeter/Greet"}, greet)
	}}},
}
