package connectlimit_test

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// The test service: a unary call, a server stream, a client stream and a bidi stream of
// wrapperspb.StringValue, served by connect's generic handlers (no generated code).
const (
	sayProcedure     = "/test.v1.Test/Say"
	listProcedure    = "/test.v1.Test/List"
	collectProcedure = "/test.v1.Test/Collect"
	chatProcedure    = "/test.v1.Test/Chat"
)

type msg = wrapperspb.StringValue

// service holds the handlers' bodies, which each test sets.
type service struct {
	say     func(ctx context.Context, text string) (string, error)
	list    func(ctx context.Context, text string, send func(string) error) error
	collect func(ctx context.Context, receive func() (string, error)) (string, error)
	chat    func(ctx context.Context, receive func() (string, error), send func(string) error) error
}

// serve serves svc over HTTP/2 cleartext on 127.0.0.1 with the handler options opts, and
// returns its base URL and a client that speaks HTTP/2 cleartext to it.
func serve(t *testing.T, svc *service, opts ...connect.HandlerOption) (string, *http.Client) {
	t.Helper()
	handlers := map[string]http.Handler{}
	handlers[sayProcedure] = connect.NewUnaryHandler(sayProcedure, func(ctx context.Context, r *connect.Request[msg]) (*connect.Response[msg], error) {
		text, err := svc.say(ctx, r.Msg.GetValue())
		if err != nil {
			return nil, err
		}
		return connect.NewResponse(wrapperspb.String(text)), nil
	}, opts...)
	handlers[listProcedure] = connect.NewServerStreamHandler(listProcedure, func(ctx context.Context, r *connect.Request[msg], s *connect.ServerStream[msg]) error {
		return svc.list(ctx, r.Msg.GetValue(), func(text string) error { return s.Send(wrapperspb.String(text)) })
	}, opts...)
	handlers[collectProcedure] = connect.NewClientStreamHandler(collectProcedure, func(ctx context.Context, s *connect.ClientStream[msg]) (*connect.Response[msg], error) {
		text, err := svc.collect(ctx, func() (string, error) {
			if !s.Receive() {
				return "", errors.Join(io.EOF, s.Err())
			}
			return s.Msg().GetValue(), nil
		})
		if err != nil {
			return nil, err
		}
		return connect.NewResponse(wrapperspb.String(text)), nil
	}, opts...)
	handlers[chatProcedure] = connect.NewBidiStreamHandler(chatProcedure, func(ctx context.Context, s *connect.BidiStream[msg, msg]) error {
		return svc.chat(ctx, func() (string, error) {
			m, err := s.Receive()
			return m.GetValue(), err
		}, func(text string) error { return s.Send(wrapperspb.String(text)) })
	}, opts...)
	return serveHandlers(t, handlers)
}

// serveHandlers serves each handler at its path over HTTP/2 cleartext on 127.0.0.1, and
// returns the base URL and a client that speaks HTTP/2 cleartext to it.
func serveHandlers(t *testing.T, handlers map[string]http.Handler) (string, *http.Client) {
	t.Helper()
	mux := http.NewServeMux()
	for path, h := range handlers {
		mux.Handle(path, h)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: mux, Protocols: &protocols, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = srv.Serve(ln) }()
	client := &http.Client{Transport: &http.Transport{Protocols: &protocols}}
	t.Cleanup(func() {
		client.CloseIdleConnections()
		_ = srv.Close()
	})
	return "http://" + ln.Addr().String(), client
}

// clients are the test service's clients, with the client options opts.
type clients struct {
	say     *connect.Client[msg, msg]
	list    *connect.Client[msg, msg]
	collect *connect.Client[msg, msg]
	chat    *connect.Client[msg, msg]
}

func newClients(url string, hc *http.Client, opts ...connect.ClientOption) clients {
	return clients{
		say:     connect.NewClient[msg, msg](hc, url+sayProcedure, opts...),
		list:    connect.NewClient[msg, msg](hc, url+listProcedure, opts...),
		collect: connect.NewClient[msg, msg](hc, url+collectProcedure, opts...),
		chat:    connect.NewClient[msg, msg](hc, url+chatProcedure, opts...),
	}
}

// say makes a unary call.
func (c clients) callSay(ctx context.Context, text string) (string, error) {
	resp, err := c.say.CallUnary(ctx, connect.NewRequest(wrapperspb.String(text)))
	if err != nil {
		return "", err
	}
	return resp.Msg.GetValue(), nil
}

// callList reads a server stream to its end and returns what it received.
func (c clients) callList(ctx context.Context, text string) ([]string, error) {
	s, err := c.list.CallServerStream(ctx, connect.NewRequest(wrapperspb.String(text)))
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var got []string
	for s.Receive() {
		got = append(got, s.Msg().GetValue())
	}
	return got, s.Err()
}
