package httplimit

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/resilience4cata/adaptivelimit"
)

// Transport returns a RoundTripper that runs each round trip of base inside l, for an
// outgoing dependency; a nil base means http.DefaultTransport. A call that finds the limit
// full returns l's error, which matches adaptivelimit.ErrLimitExceeded, without touching the
// network.
//
// Where l has a MaxWait, a call waits for a slot that long at most, and no longer than its
// context lasts; a limiter without one rejects at once.
//
// A call with a response holds its slot until the response body is read to EOF or closed,
// so that its latency covers the body: a body that is never closed holds its slot for good.
// A response without a body (a nil Body, as a custom RoundTripper may return for a 204 or a
// HEAD) is complete, and frees its slot at once.
// The outcome function (DefaultClientOutcome, see WithClientOutcome) decides from the
// status or the error whether the call is a sample, a drop or nothing; a body read that fails
// is judged again with its error. A base transport, a body or an outcome function that
// panics frees the slot without a sample, and the panic goes on to the caller.
//
// Transport sends the class of each request's context (adaptivelimit.WithClass) in the
// x-criticality header, in place of any value the request carries, and removes the header
// from a request whose context has no class (see WithClassHeader): a proxy that passes its
// caller's headers on does not pass on the class its caller claimed. It panics if l is nil
// or an option is invalid.
func Transport(l *adaptivelimit.Limiter, base http.RoundTripper, opts ...ClientOption) http.RoundTripper {
	o := newClientOptions(l, opts)
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{l: l, base: base, o: o}
}

type transport struct {
	l    *adaptivelimit.Limiter
	base http.RoundTripper
	o    clientOptions
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.o.bypass(req) {
		return t.base.RoundTrip(t.o.withClass(req))
	}
	p, req, err := t.o.acquire(t.l, req)
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close() // a RoundTripper closes the request body, even on errors
		}
		return nil, err
	}
	defer p.Cancel() // base or the outcome function panicked, or the body holds p
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		p.Finish(t.o.outcome(nil, withDeadline(req, err)))
		return nil, err
	}
	if resp == nil {
		return nil, nil // base broke the RoundTripper contract: its caller reports it
	}
	outcome := t.o.outcome(resp, nil)
	if _, ok := resp.Body.(io.ReadWriteCloser); ok || resp.Body == nil {
		// A switched protocol (101): the body is a connection, which is no longer a call. Or
		// no body at all, which a custom RoundTripper may return for a 204 or a HEAD: the
		// response is complete.
		p.Finish(outcome)
		return resp, nil
	}
	b := &body{ReadCloser: resp.Body, outcome: outcome, resp: resp, judge: t.o.outcome}
	b.p = p.Move() // the body finishes it
	resp.Body = b
	return resp, nil
}

// withDeadline returns context.DeadlineExceeded in place of err if the request's deadline
// has passed. An http.Client with a Timeout cancels a request to a RoundTripper it does not
// know, as this one, both through its context's deadline and through the request's Cancel
// channel at the same moment, and which of the two errors the base transport returns is a
// race: the second wraps context.Canceled, which says nothing about load. The deadline is
// what happened.
func withDeadline(req *http.Request, err error) error {
	if req == nil {
		return err
	}
	if d, ok := req.Context().Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return err
}

// body holds a response's slot until it is read to EOF or closed.
type body struct {
	io.ReadCloser
	p        adaptivelimit.Permit
	outcome  adaptivelimit.Outcome
	resp     *http.Response
	judge    func(resp *http.Response, err error) adaptivelimit.Outcome
	finished atomic.Bool // Close may run beside Read
}

func (b *body) Read(buf []byte) (int, error) {
	n, err := b.ReadCloser.Read(buf)
	switch {
	case err == io.EOF:
		b.finish(b.outcome)
	case err != nil && b.finished.CompareAndSwap(false, true):
		defer b.p.Cancel() // the outcome function panicked
		b.p.Finish(b.judge(b.resp, withDeadline(b.resp.Request, err)))
	}
	return n, err
}

func (b *body) Close() error {
	defer b.finish(b.outcome) // even if the body's Close panics
	return b.ReadCloser.Close()
}

func (b *body) finish(o adaptivelimit.Outcome) {
	if b.finished.CompareAndSwap(false, true) {
		b.p.Finish(o)
	}
}
