package integration

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/resilience4cata/adaptivelimit"
)

// StreamPermit holds the slot of a stream until the stream ends. Several goroutines can see
// the end of one stream (a receive that returns its status, a send that fails, the stream's
// context ending): the first to call End or Cancel finishes the permit, and the others do
// nothing. The integrations of streaming RPCs (grpclimit, connectlimit) build on it.
type StreamPermit struct {
	p        adaptivelimit.Permit
	classify func(error) adaptivelimit.Outcome
	stop     func() bool // stops the finish when ctx is done
	finished atomic.Bool
	// An End or Cancel that comes once ctx's finish has started waits for it to end, so that
	// the slot is free when it returns.
	stopOnce sync.Once
	stopped  bool          // stop stopped ctx's finish before it started
	after    chan struct{} // closed when ctx's finish ends
}

// NewStreamPermit takes over the permit *p holds (see Permit.Move), for a stream whose
// context is ctx: the caller no longer finishes it, and a deferred p.Cancel does nothing.
// End(nil) is a sample, End(err) what classify says of err. If ctx is done before the stream
// ends, the permit is finished with ctx.Err() on the goroutine that context.AfterFunc
// starts: nothing could recover a panic there, so a classify (or a Clock) that panics frees
// the slot without a sample, and its panic is dropped rather than let it end the process.
func NewStreamPermit(ctx context.Context, p *adaptivelimit.Permit, classify func(error) adaptivelimit.Outcome) *StreamPermit {
	s := &StreamPermit{p: p.Move(), classify: classify, after: make(chan struct{})}
	s.stop = context.AfterFunc(ctx, func() {
		defer close(s.after)
		defer func() { _ = recover() }()
		s.finish(ctx.Err())
	})
	return s
}

// End finishes the stream with its outcome: nil for a stream that ended well, else its
// error. A classify that panics frees the slot without a sample, and the panic goes on.
// Where ctx's finish has started, End waits for it instead.
func (s *StreamPermit) End(err error) {
	if s.stopFinish() {
		s.finish(err)
	}
}

// Received ends the stream after a receive that returned err: io.EOF, a stream that ended
// well, is a sample, and another error is classified. A message (err nil) ends it only where
// last says that the server sends one message, after which the stream is over.
func (s *StreamPermit) Received(err error, last bool) {
	switch {
	case errors.Is(err, io.EOF):
		s.End(nil)
	case err != nil:
		s.End(err)
	case last:
		s.End(nil)
	}
}

// Sent ends the stream after a send that failed with err. io.EOF says that the stream is
// over and the next receive returns its status, so it ends nothing.
func (s *StreamPermit) Sent(err error) {
	if err != nil && !errors.Is(err, io.EOF) {
		s.End(err)
	}
}

// Cancel frees the slot without a sample, where the caller gave the stream up before its
// end. Where ctx's finish has started, Cancel waits for it instead.
func (s *StreamPermit) Cancel() {
	if s.stopFinish() && s.finished.CompareAndSwap(false, true) {
		s.p.Cancel()
	}
}

// stopFinish stops ctx's finish, or waits for it to end where it has started, and reports
// whether it was stopped.
func (s *StreamPermit) stopFinish() bool {
	s.stopOnce.Do(func() { s.stopped = s.stop() })
	if !s.stopped {
		<-s.after
	}
	return s.stopped
}

func (s *StreamPermit) finish(err error) {
	if !s.finished.CompareAndSwap(false, true) {
		return
	}
	defer s.p.Cancel() // classify panicked: Finish has not cleared p
	if err == nil {
		s.p.Finish(adaptivelimit.Sample)
		return
	}
	s.p.Finish(s.classify(err))
}
