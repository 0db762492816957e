package grpclimit_test

import (
	"context"
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// echo is a test service, written as protoc-gen-go-grpc would write it: Unary answers one
// message with the error that answer returns; Bidi answers each message it receives, and
// ends with answer's error once the client closes its side.
type echo struct {
	answer func(ctx context.Context, msg string) error
}

const (
	unaryMethod = "/test.Echo/Unary"
	bidiMethod  = "/test.Echo/Bidi"
)

var bidiDesc = grpc.StreamDesc{StreamName: "Bidi", ServerStreams: true, ClientStreams: true}

var echoDesc = grpc.ServiceDesc{
	ServiceName: "test.Echo",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Unary",
		Handler: func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			in := new(wrapperspb.StringValue)
			if err := dec(in); err != nil {
				return nil, err
			}
			handler := func(ctx context.Context, req any) (any, error) {
				msg := req.(*wrapperspb.StringValue).GetValue()
				if err := srv.(*echo).answer(ctx, msg); err != nil {
					return nil, err
				}
				return wrapperspb.String(msg), nil
			}
			if interceptor == nil {
				return handler(ctx, in)
			}
			return interceptor(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: unaryMethod}, handler)
		},
	}},
	Streams: []grpc.StreamDesc{{
		StreamName: "Bidi", ServerStreams: true, ClientStreams: true,
		Handler: func(srv any, stream grpc.ServerStream) error {
			for {
				in := new(wrapperspb.StringValue)
				err := stream.RecvMsg(in)
				if err == io.EOF {
					return srv.(*echo).answer(stream.Context(), "end")
				}
				if err != nil {
					return err
				}
				if err := stream.SendMsg(in); err != nil {
					return err
				}
			}
		},
	}},
}

// networks are the two ways the tests reach the server: a real loopback port, and bufconn.
var networks = []string{"tcp", "bufconn"}

// dial starts a server of the echo service on network with opts, and returns a client
// connection to it with dialOpts.
func dial(t *testing.T, network string, e *echo, opts []grpc.ServerOption, dialOpts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	srv := grpc.NewServer(opts...)
	srv.RegisterService(&echoDesc, e)
	var lis net.Listener
	target := "passthrough:///bufnet"
	dialOpts = append(dialOpts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if network == "tcp" {
		var err error
		lis, err = net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		target = "passthrough:///" + lis.Addr().String()
	} else {
		buf := bufconn.Listen(1 << 20)
		lis = buf
		dialOpts = append(dialOpts, grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return buf.DialContext(ctx)
		}))
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	cc, err := grpc.NewClient(target, dialOpts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

func unary(ctx context.Context, cc *grpc.ClientConn, msg string, opts ...grpc.CallOption) error {
	return cc.Invoke(ctx, unaryMethod, wrapperspb.String(msg), new(wrapperspb.StringValue), opts...)
}
