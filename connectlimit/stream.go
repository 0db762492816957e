package connectlimit

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"

	"connectrpc.com/connect"

	"github.com/resilience4cata/adaptivelimit"
)

// WrapStreamingClient runs each stream inside l. The stream holds its slot until it ends:
// Receive returns io.EOF or an error (or, on a stream whose server sends one message,
// returns it), Send fails, CloseResponse is called before the end (the caller gave up: no
// sample) or the stream's context is done (classified by DefaultClassifier, whatever
// WithClassifier says). A stream that is left open holds its slot, as connect holds its
// resources.
func (i *interceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		p, err := i.l.Acquire()
		if err != nil {
			return newRejectedConn(spec, i.rejected(err, true))
		}
		finished := false
		defer func() {
			if !finished { // next panicked
				p.Cancel()
			}
		}()
		conn := next(ctx, spec)
		finished = true
		s := &clientConn{StreamingClientConn: conn, p: p, classify: i.o.classify, oneReply: spec.StreamType == connect.StreamTypeClient}
		// The context's end is classified by DefaultClassifier: in AfterFunc's goroutine, a
		// classifier that panics would end the process.
		s.stop = context.AfterFunc(ctx, func() { s.finish(DefaultClassifier(ctx.Err())) })
		return s
	}
}

type clientConn struct {
	connect.StreamingClientConn
	p        adaptivelimit.Permit
	classify func(error) adaptivelimit.Outcome
	oneReply bool        // the server sends one message, after which the stream is over
	stop     func() bool // stops the finish when the context is done
	finished atomic.Bool
}

func (s *clientConn) Receive(m any) error {
	err := s.StreamingClientConn.Receive(m)
	switch {
	case errors.Is(err, io.EOF):
		s.end(adaptivelimit.Sample)
	case err != nil:
		s.endClassified(err)
	case s.oneReply:
		s.end(adaptivelimit.Sample)
	}
	return err
}

func (s *clientConn) Send(m any) error {
	err := s.StreamingClientConn.Send(m)
	if err != nil && !errors.Is(err, io.EOF) { // io.EOF: the status comes from Receive
		s.endClassified(err)
	}
	return err
}

// CloseResponse ends a stream that the caller stops reading before its end: that says
// nothing about the dependency.
func (s *clientConn) CloseResponse() error {
	err := s.StreamingClientConn.CloseResponse()
	s.end(adaptivelimit.Ignore)
	return err
}

// end finishes the stream with o before its context is done.
func (s *clientConn) end(o adaptivelimit.Outcome) {
	s.stop()
	s.finish(o)
}

// endClassified finishes the stream with the classification of err before its context is
// done.
func (s *clientConn) endClassified(err error) {
	s.stop()
	s.finishClassified(err)
}

// finishClassified finishes the stream with the classifier's outcome for err. A classifier
// that panics frees the slot, and the panic goes on.
func (s *clientConn) finishClassified(err error) {
	if !s.finished.CompareAndSwap(false, true) {
		return
	}
	defer s.p.Cancel() // the classifier panicked: Finish has not cleared p
	s.p.Finish(s.classify(err))
}

func (s *clientConn) finish(o adaptivelimit.Outcome) {
	if s.finished.CompareAndSwap(false, true) {
		s.p.Finish(o)
	}
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
