package connectlimit

import (
	"context"
	"net/http"

	"connectrpc.com/connect"
	"github.com/resilience4cata/adaptivelimit/integration"
)

// WrapStreamingClient runs each stream inside l. The stream holds its slot until it ends:
// Receive returns io.EOF or an error (or, on a stream whose server sends one message,
// returns it), Send fails, CloseResponse is called before the end (the caller gave up: no
// sample) or the stream's context is done. A stream that is left open holds its slot, as
// connect holds its resources.
func (i *interceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		if i.o.bypass(ctx, spec) {
			return i.streamClass(ctx, next(ctx, spec))
		}
		p, err := i.l.AcquireContext(ctx)
		if err != nil {
			return newRejectedConn(spec, i.rejected(err, true))
		}
		defer p.Cancel() // next panicked, or the stream holds p
		conn := i.streamClass(ctx, next(ctx, spec))
		return &clientConn{StreamingClientConn: conn, p: integration.NewStreamPermit(ctx, &p, i.o.outcome),
			oneReply: spec.StreamType == connect.StreamTypeClient}
	}
}

type clientConn struct {
	connect.StreamingClientConn
	p        *integration.StreamPermit
	oneReply bool // the server sends one message, after which the stream is over
}

func (s *clientConn) Receive(m any) error {
	err := s.StreamingClientConn.Receive(m)
	s.p.Received(err, s.oneReply)
	return err
}

func (s *clientConn) Send(m any) error {
	err := s.StreamingClientConn.Send(m)
	s.p.Sent(err)
	return err
}

// CloseResponse frees the slot of a stream that the caller stops reading before its end
// without a sample: that says nothing about the dependency.
func (s *clientConn) CloseResponse() error {
	err := s.StreamingClientConn.CloseResponse()
	s.p.Cancel()
	return err
}

// rejectedConn is the stream of a call that the limiter rejected: it is never sent, and
// every Send and Receive fails with the rejection.
type rejectedConn struct {
	spec                       connect.Spec
	err                        error
	request, response, trailer http.Header
}

func newRejectedConn(spec connect.Spec, err error) *rejectedConn {
	return &rejectedConn{spec: spec, err: err, request: http.Header{}, response: http.Header{}, trailer: http.Header{}}
}

func (c *rejectedConn) Spec() connect.Spec           { return c.spec }
func (c *rejectedConn) Peer() connect.Peer           { return connect.Peer{} }
func (c *rejectedConn) Send(any) error               { return c.err }
func (c *rejectedConn) RequestHeader() http.Header   { return c.request }
func (c *rejectedConn) CloseRequest() error          { return nil }
func (c *rejectedConn) Receive(any) error            { return c.err }
func (c *rejectedConn) ResponseHeader() http.Header  { return c.response }
func (c *rejectedConn) ResponseTrailer() http.Header { return c.trailer }
func (c *rejectedConn) CloseResponse() error         { return nil }
