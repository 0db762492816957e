package connectlimit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

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
