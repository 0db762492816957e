package connectlimit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/connectlimit"
)

// Shed load in a handler: a call that finds the limit full gets CodeResourceExhausted and
// Retry-After at once. The same interceptor in a client's options limits the calls it sends.
func Example() {
	limiter, err := adaptivelimit.New(adaptivelimit.Config{Name: "greeter", InitialLimit: 1, MinLimit: 1, MaxLimit: 1})
	if err != nil {
		panic(err)
	}
	const greet = "/greet.v1.Greeter/Greet"
	mux := http.NewServeMux()
	mux.Handle(greet, connect.NewUnaryHandler(greet,
		func(_ context.Context, r *connect.Request[wrapperspb.StringValue]) (*connect.Response[wrapperspb.StringValue], error) {
			return connect.NewResponse(wrapperspb.String("hello, " + r.Msg.GetValue())), nil
		},
		connect.WithInterceptors(connectlimit.NewInterceptor(limiter)),
	))
	server := httptest.NewServer(mux)
	defer server.Close()
	client := connect.NewClient[wrapperspb.StringValue, wrapperspb.StringValue](server.Client(), server.URL+greet)

	resp, err := client.CallUnary(context.Background(), connect.NewRequest(wrapperspb.String("ada")))
	fmt.Println(resp.Msg.GetValue(), err)

	held, _ := limiter.Acquire() // another call fills the limit
	_, err = client.CallUnary(context.Background(), connect.NewRequest(wrapperspb.String("bob")))
	var ce *connect.Error
	if errors.As(err, &ce) {
		fmt.Println(ce.Code(), "Retry-After:", ce.Meta().Get(connectlimit.RetryAfterKey))
	}
	held.Done(nil)
	// Output:
	// hello, ada <nil>
	// resource_exhausted Retry-After: 1
}

// A client's interceptor sends the class of each call's context in the x-criticality header,
// and takes its own slot for it; the handler's HeaderClass reads it. The gRPC health service
// takes no slot on either side (DefaultBypass).
func ExampleHeaderClass() {
	classes := []adaptivelimit.Class{{Name: "critical", Reserve: 0.5}, {Name: "sheddable"}}
	server, _ := adaptivelimit.New(adaptivelimit.Config{Name: "greeter", InitialLimit: 2, MinLimit: 2, MaxLimit: 2, Classes: classes})
	handler := connect.WithInterceptors(connectlimit.NewInterceptor(server,
		connectlimit.WithClassFrom(connectlimit.HeaderClass(connectlimit.DefaultClassHeader, map[string]string{"critical": "critical"}, connectlimit.TrustNetworks(netip.MustParsePrefix("127.0.0.0/8"))))))
	answer := func(ctx context.Context, r *connect.Request[wrapperspb.StringValue]) (*connect.Response[wrapperspb.StringValue], error) {
		class, _ := adaptivelimit.ClassFromContext(ctx)
		return connect.NewResponse(wrapperspb.String(fmt.Sprintf("%s as %q", r.Spec().Procedure, class))), nil
	}
	const greet, check = "/greet.v1.Greeter/Greet", "/grpc.health.v1.Health/Check"
	mux := http.NewServeMux()
	mux.Handle(greet, connect.NewUnaryHandler(greet, answer, handler))
	mux.Handle(check, connect.NewUnaryHandler(check, answer, handler))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	client, _ := adaptivelimit.New(adaptivelimit.Config{Name: "greeter-client", Classes: classes})
	limited := connect.WithInterceptors(connectlimit.NewInterceptor(client))
	shared, _ := server.Acquire() // a sheddable call holds the handler's shared slot
	defer shared.Done(nil)
	for _, class := range []string{"critical", "sheddable"} {
		ctx := adaptivelimit.WithClass(context.Background(), class)
		for _, procedure := range []string{greet, check} {
			c := connect.NewClient[wrapperspb.StringValue, wrapperspb.StringValue](srv.Client(), srv.URL+procedure, limited)
			resp, err := c.CallUnary(ctx, connect.NewRequest(wrapperspb.String("ada")))
			if err != nil {
				fmt.Println(class+":", connect.CodeOf(err))
				continue
			}
			fmt.Println(class+":", resp.Msg.GetValue())
		}
	}
	// Output:
	// critical: /greet.v1.Greeter/Greet as "critical"
	// critical: /grpc.health.v1.Health/Check as ""
	// sheddable: resource_exhausted
	// sheddable: /grpc.health.v1.Health/Check as ""
}
