package connectlimit_test

import (
	"context"
	"net/http"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/connectlimit"
	"github.com/resilience4cata/adaptivelimit/limittest"
)

// A client's interceptor sends the context's class in X-Criticality; a handler that lists
// the value takes the call's slot for that class, and its context carries it. Values it does
// not list are the lowest class.
func TestClassesThroughHeader(t *testing.T) {
	for _, protocol := range protocols {
		t.Run(protocol.name, func(t *testing.T) {
			server, client := limittest.Classed(t, "server", 2), limittest.Classed(t, "client", 2)
			var seen []string
			note := func(ctx context.Context, what string) {
				class, _ := adaptivelimit.ClassFromContext(ctx)
				seen = append(seen, what+"="+class)
			}
			svc := &service{
				say: func(ctx context.Context, _ string) (string, error) { note(ctx, "say"); return "hi", nil },
				list: func(ctx context.Context, _ string, send func(string) error) error {
					note(ctx, "list")
					return send("one")
				},
			}
			classOf := connectlimit.WithClassFrom(connectlimit.HeaderClass(connectlimit.DefaultClassHeader, map[string]string{"critical": "critical"}, trustLoopback))
			url, hc := serve(t, svc, connect.WithInterceptors(connectlimit.NewInterceptor(server, classOf)))
			c := newClients(url, hc, append([]connect.ClientOption{connect.WithInterceptors(connectlimit.NewInterceptor(client))}, protocol.opts...)...)
			held, err := server.Acquire() // the shared slot
			require.NoError(t, err)
			critical := adaptivelimit.WithClass(context.Background(), "critical")

			_, err = c.callSay(critical, "")
			require.NoError(t, err)
			_, err = c.callList(critical, "")
			require.NoError(t, err)
			plain := newClients(url, hc, protocol.opts...) // sends the header as the test sets it
			for _, header := range []string{"", "0", "Critical"} {
				req := connect.NewRequest(&msg{})
				if header != "" {
					req.Header().Set(connectlimit.DefaultClassHeader, header)
				}
				_, err := plain.say.CallUnary(context.Background(), req)
				require.Equal(t, connect.CodeResourceExhausted, connect.CodeOf(err), "header %q: %v", header, err)
			}
			_, err = c.callSay(adaptivelimit.WithClass(context.Background(), "batch"), "")
			require.Equal(t, connect.CodeResourceExhausted, connect.CodeOf(err), "%v", err)
			require.Equal(t, []string{"say=critical", "list=critical"}, seen)
			require.Equal(t, uint64(4), server.Snapshot().Classes[1].Rejected)
			require.Zero(t, client.Snapshot().Rejected, "the client's own slots were free")
			held.Done(nil)
			require.Zero(t, client.InFlight())
			require.Eventually(t, func() bool { return server.InFlight() == 0 }, 5e9, 1e6)
		})
	}
}

// A client takes its own slot for the context's class: a critical call passes a client
// whose shared slot is held.
func TestClientClass(t *testing.T) {
	client := limittest.Classed(t, "client", 2)
	url, hc := serve(t, answering(func(context.Context) error { return nil }))
	c := newClients(url, hc, connect.WithInterceptors(connectlimit.NewInterceptor(client)))
	held, err := client.Acquire()
	require.NoError(t, err)
	defer held.Cancel()
	critical := adaptivelimit.WithClass(context.Background(), "critical")
	_, err = c.callSay(critical, "")
	require.NoError(t, err)
	_, err = c.callList(critical, "")
	require.NoError(t, err)
	require.Error(t, callChat(critical, c)) // io.EOF at the stream's end
	_, err = c.callSay(context.Background(), "")
	requireClientRejection(t, err)
	require.Equal(t, uint64(1), client.Snapshot().Classes[1].Rejected)
	require.Equal(t, 1, client.InFlight())
}

// WithClassHeader("") sends no class; the client's own slot is still taken for it.
func TestNoClassHeader(t *testing.T) {
	var got []string
	classOf := connectlimit.WithClassFrom(func(_ context.Context, _ connect.Spec, h http.Header) string {
		got = append(got, h.Values(connectlimit.DefaultClassHeader)...)
		return ""
	})
	server, _ := limittest.Fixed(t, "server", 2)
	url, hc := serve(t, &service{say: func(context.Context, string) (string, error) { return "hi", nil }},
		connect.WithInterceptors(connectlimit.NewInterceptor(server, classOf)))
	client := limittest.Classed(t, "client", 2)
	c := newClients(url, hc, connect.WithInterceptors(connectlimit.NewInterceptor(client, connectlimit.WithClassHeader(""))))
	held, err := client.Acquire()
	require.NoError(t, err)
	defer held.Cancel()
	_, err = c.callSay(adaptivelimit.WithClass(context.Background(), "critical"), "")
	require.NoError(t, err)
	_, err = c.callSay(context.Background(), "")
	requireClientRejection(t, err)
	require.Empty(t, got)
}

// Health checks bypass the limit by default, in handlers and clients, and are not measured;
// WithBypass replaces the default.
func TestBypass(t *testing.T) {
	const health = "/grpc.health.v1.Health/Check"
	server, client := limittest.Classed(t, "server", 2), limittest.Classed(t, "client", 2)
	sayOnly := connectlimit.WithBypass(func(_ context.Context, spec connect.Spec) bool { return spec.Procedure == sayProcedure })
	url, hc := serveProcedures(t, []string{health, sayProcedure}, connect.WithInterceptors(connectlimit.NewInterceptor(server)))
	checkServer := connect.NewClient[msg, msg](hc, url+health)
	checkClient := connect.NewClient[msg, msg](hc, url+health, connect.WithInterceptors(connectlimit.NewInterceptor(client, sayOnly)))
	say := connect.NewClient[msg, msg](hc, url+sayProcedure, connect.WithInterceptors(connectlimit.NewInterceptor(client, sayOnly)))

	freeServer, freeClient := limittest.HoldClassed(t, server), limittest.HoldClassed(t, client)
	_, err := checkClient.CallUnary(context.Background(), connect.NewRequest(&msg{}))
	requireClientRejection(t, err) // the client's bypass replaces the default
	_, err = say.CallUnary(context.Background(), connect.NewRequest(&msg{}))
	require.Equal(t, connect.CodeResourceExhausted, connect.CodeOf(err), "the client bypasses it; the server rejects it: %v", err)
	require.ErrorContains(t, err, `limit of "server" exceeded`)
	freeClient()

	_, err = checkServer.CallUnary(context.Background(), connect.NewRequest(&msg{}))
	require.NoError(t, err, "the server bypasses health checks")
	require.Equal(t, uint64(1), server.Snapshot().Rejected, "the say call only")
	freeServer()
	require.Zero(t, server.Snapshot().Windows)
	require.Equal(t, uint64(2), server.Snapshot().Successes, "the test's own permits: a bypassed call is not measured")
}

// serveProcedures serves a unary echo at each procedure, as serve serves the test service.
func serveProcedures(t *testing.T, procedures []string, opts ...connect.HandlerOption) (string, *http.Client) {
	t.Helper()
	handlers := map[string]http.Handler{}
	for _, p := range procedures {
		handlers[p] = connect.NewUnaryHandler(p, func(_ context.Context, r *connect.Request[msg]) (*connect.Response[msg], error) {
			return connect.NewResponse(r.Msg), nil
		}, opts...)
	}
	return serveHandlers(t, handlers)
}
