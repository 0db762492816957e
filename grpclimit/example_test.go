package grpclimit_test

import (
	"context"
	"errors"
	"fmt"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

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
