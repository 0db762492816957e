package connectlimit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/netip"
	"sync"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/connectlimit"
)

// trustLoopback trusts the class of the tests' own clients, which reach the handlers over
// 127.0.0.1.
var trustLoopback = connectlimit.TrustNetworks(netip.MustParsePrefix("127.0.0.0/8"))

// readme is a limiter with the classes of the README's "Priorities" section.
func readme(t *testing.T, name string) *adaptivelimit.Limiter {
	t.Helper()
	l, err := adaptivelimit.New(adaptivelimit.Config{Name: name, Classes: []adaptivelimit.Class{
		{Name: "critical", Reserve: 0.3}, {Name: "standard", Reserve: 0.4}, {Name: "sheddable"},
	}})
	require.NoError(t, err)
	return l
}

// recorder records, for each call its handlers serve, the class of the handler's context
// and the class header it received, as "class|[values]".
type recorder struct {
	mu   sync.Mutex
	seen []string
}

func (r *recorder) record(ctx context.Context, h http.Header) {
	class, _ := adaptivelimit.ClassFromContext(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, fmt.Sprintf("%s|%v", class, h.Values(connectlimit.DefaultClassHeader)))
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := r.seen
	r.seen = nil
	return seen
}

// handlers serves say (unary), list (a server stream) and chat (a bidi stream), each of
// which records its call, with the handler options opts.
func (r *recorder) handlers(opts ...connect.HandlerOption) map[string]http.Handler {
	return map[string]http.Handler{
		sayProcedure: connect.NewUnaryHandler(sayProcedure, func(ctx context.Context, req *connect.Request[msg]) (*connect.Response[msg], error) {
			r.record(ctx, req.Header())
			return connect.NewResponse(req.Msg), nil
		}, opts...),
		listProcedure: connect.NewServerStreamHandler(listProcedure, func(ctx context.Context, req *connect.Request[msg], s *connect.ServerStream[msg]) error {
			r.record(ctx, req.Header())
			return s.Send(req.Msg)
		}, opts...),
		chatProcedure: connect.NewBidiStreamHandler(chatProcedure, func(ctx context.Context, s *connect.BidiStream[msg, msg]) error {
			r.record(ctx, s.RequestHeader())
			for {
				if _, err := s.Receive(); errors.Is(err, io.EOF) {
					return nil
				} else if err != nil {
					return err
				}
			}
		}, opts...),
	}
}

// callAll makes a unary call, a server stream and a bidi stream in ctx, each with the header
// pairs kv set on its request.
func callAll(t *testing.T, ctx context.Context, c clients, kv ...string) {
	t.Helper()
	set := func(h http.Header) {
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
	}
	req := connect.NewRequest(&msg{})
	set(req.Header())
	_, err := c.say.CallUnary(ctx, req)
	require.NoError(t, err)

	req = connect.NewRequest(&msg{})
	set(req.Header())
	list, err := c.list.CallServerStream(ctx, req)
	require.NoError(t, err)
	for list.Receive() {
	}
	require.NoError(t, list.Err())
	require.NoError(t, list.Close())

	chat := c.chat.CallBidiStream(ctx)
	set(chat.RequestHeader())
	require.NoError(t, chat.Send(&msg{}))
	require.NoError(t, chat.CloseRequest())
	_, err = chat.Receive()
	require.ErrorIs(t, err, io.EOF)
	require.NoError(t, chat.CloseResponse())
}

// A client outside the trusted network that sends X-Criticality: critical is served as the
// lowest class, on unary calls and streams, on every protocol; one inside it, as critical.
func TestUntrustedClientCannotPromoteItself(t *testing.T) {
	allowed := map[string]string{"critical": "critical", "standard": "standard"}
	for _, tc := range []struct {
		name    string
		trusted func(context.Context, connect.Peer, http.Header) bool
		want    string
	}{
		{"outside 10.0.0.0/8", connectlimit.TrustNetworks(netip.MustParsePrefix("10.0.0.0/8")), "|[critical]"},
		{"no network", connectlimit.TrustNetworks(), "|[critical]"},
		{"inside 127.0.0.0/8", trustLoopback, "critical|[critical]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rec recorder
			url, hc := serveHandlers(t, rec.handlers(connect.WithInterceptors(connectlimit.NewInterceptor(readme(t, "api"),
				connectlimit.WithClassFrom(connectlimit.HeaderClass(connectlimit.DefaultClassHeader, allowed, tc.trusted))))))
			for _, protocol := range protocols {
				callAll(t, context.Background(), newClients(url, hc, protocol.opts...), connectlimit.DefaultClassHeader, "critical")
				require.Equal(t, []string{tc.want, tc.want, tc.want}, rec.take(), protocol.name)
			}
		})
	}
}

// A proxy whose handler passes its caller's header on to the backend, through a client with
// the interceptor: its own interceptor lists only gold and trusts only callers with the
// partner's token, so an outside client is the lowest class there, and the class it wrote
// is not passed on to the backend, which trusts the proxy's network and would grant it. The
// gold of a trusted caller is passed on.
func TestProxyDoesNotPassOnClientClass(t *testing.T) {
	var rec recorder
	backendURL, backendHC := serveHandlers(t, rec.handlers(connect.WithInterceptors(connectlimit.NewInterceptor(readme(t, "backend"),
		connectlimit.WithClassFrom(connectlimit.HeaderClass(connectlimit.DefaultClassHeader,
			map[string]string{"critical": "critical", "gold": "standard"}, trustLoopback))))))

	proxyLimiter, err := adaptivelimit.New(adaptivelimit.Config{Name: "proxy", Classes: []adaptivelimit.Class{
		{Name: "gold", Reserve: 0.5}, {Name: "standard"},
	}})
	require.NoError(t, err)
	limited := connectlimit.NewInterceptor(proxyLimiter, connectlimit.WithClassFrom(connectlimit.HeaderClass(connectlimit.DefaultClassHeader,
		map[string]string{"gold": "gold"}, func(_ context.Context, _ connect.Peer, h http.Header) bool {
			return h.Get("Authorization") == "Bearer partner"
		})))
	backend := connect.NewClient[msg, msg](backendHC, backendURL+sayProcedure, connect.WithInterceptors(limited))
	proxyURL, proxyHC := serveHandlers(t, map[string]http.Handler{
		sayProcedure: connect.NewUnaryHandler(sayProcedure, func(ctx context.Context, req *connect.Request[msg]) (*connect.Response[msg], error) {
			out := connect.NewRequest(req.Msg)
			maps.Copy(out.Header(), req.Header()) // as a gateway passes its caller's header on
			return backend.CallUnary(ctx, out)
		}, connect.WithInterceptors(limited)),
	})

	say := connect.NewClient[msg, msg](proxyHC, proxyURL+sayProcedure)
	for _, kv := range [][]string{
		{connectlimit.DefaultClassHeader, "critical"}, // not listed by the proxy
		{connectlimit.DefaultClassHeader, "gold"},     // listed, but not trusted
		{connectlimit.DefaultClassHeader, "gold", "Authorization", "Bearer partner"},
	} {
		req := connect.NewRequest(&msg{})
		for i := 0; i < len(kv); i += 2 {
			req.Header().Set(kv[i], kv[i+1])
		}
		_, err := say.CallUnary(context.Background(), req)
		require.NoError(t, err, "%v", kv)
	}
	require.Equal(t, []string{"|[]", "|[]", "standard|[gold]"}, rec.take())
}

// A client's interceptor sends the context's class in place of any value the request's
// header holds, set on the request, on a stream or in the context's CallInfo, and removes
// it from a call whose context has none, bypassed or not.
func TestClientReplacesClassHeader(t *testing.T) {
	var rec recorder
	url, hc := serveHandlers(t, rec.handlers())
	bypassChat := connectlimit.WithBypass(func(_ context.Context, spec connect.Spec) bool { return spec.Procedure == chatProcedure })
	for _, protocol := range protocols {
		c := newClients(url, hc, append([]connect.ClientOption{connect.WithInterceptors(connectlimit.NewInterceptor(readme(t, "client"), bypassChat))}, protocol.opts...)...)
		standard := adaptivelimit.WithClass(context.Background(), "standard")
		callAll(t, context.Background(), c, connectlimit.DefaultClassHeader, "critical")
		callAll(t, standard, c, connectlimit.DefaultClassHeader, "critical")
		callAll(t, standard, c)
		ctx, info := connect.NewClientContext(context.Background())
		info.RequestHeader().Set(connectlimit.DefaultClassHeader, "critical")
		callAll(t, ctx, c)
		require.Equal(t, []string{
			"|[]", "|[]", "|[]",
			"|[standard]", "|[standard]", "|[standard]",
			"|[standard]", "|[standard]", "|[standard]",
			"|[]", "|[]", "|[]",
		}, rec.take(), protocol.name)
	}
}

// HeaderClass without its trusted panics when the interceptor is built; TrustNetworks panics
// on a network that is not valid.
func TestHeaderClassNeedsTrust(t *testing.T) {
	require.PanicsWithValue(t, "connectlimit: HeaderClass with a nil trusted", func() {
		connectlimit.NewInterceptor(readme(t, "api"), connectlimit.WithClassFrom(connectlimit.HeaderClass(connectlimit.DefaultClassHeader, map[string]string{"critical": "critical"}, nil)))
	})
	require.PanicsWithValue(t, "connectlimit: TrustNetworks: network 0 (invalid Prefix) is not valid", func() {
		connectlimit.TrustNetworks(netip.Prefix{})
	})
}
