package connectlimit

import (
	"context"
	"errors"

	"connectrpc.com/connect"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/integration"
)

// NewInterceptor returns an interceptor that runs each call inside l: as a handler's
// interceptor, the calls it serves; as a client's, the calls it sends. A call that finds the
// limit full is rejected without calling the handler or sending it: at once, or, where l
// has a MaxWait, after waiting that long at most, and no longer than the call's context
// lasts. A unary call's latency is the handler's or the round trip's; a stream's runs until
// it ends. It panics if l is nil or an option is invalid.
func NewInterceptor(l *adaptivelimit.Limiter, opts ...Option) connect.Interceptor {
	o := newOptions(l, opts)
	return &interceptor{l: l, o: o, retryAfter: retryAfterSeconds(o.retryAfter)}
}

type interceptor struct {
	l          *adaptivelimit.Limiter
	o          options
	retryAfter string
}

func (i *interceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		spec := req.Spec()
		if spec.IsClient {
			i.sendClass(ctx, req.Header())
		}
		if i.o.bypass(ctx, spec) {
			return next(ctx, req)
		}
		var p adaptivelimit.Permit
		var err error
		if spec.IsClient {
			p, err = i.l.AcquireContext(ctx)
		} else {
			ctx, p, err = i.o.class.Acquire(ctx, call{ctx, spec, req.Peer(), req.Header()})
		}
		if err != nil {
			return nil, i.rejected(err, spec.IsClient)
		}
		defer p.Cancel() // next or the outcome function panicked: Finish has not cleared p
		resp, err := next(ctx, req)
		o := i.o.outcome(err)
		if !spec.IsClient {
			o = integration.ServerOutcome(ctx, o)
		}
		p.Finish(o)
		return resp, err
	}
}

func (i *interceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		if i.o.bypass(ctx, conn.Spec()) {
			return next(ctx, conn)
		}
		ctx, p, err := i.o.class.Acquire(ctx, call{ctx, conn.Spec(), conn.Peer(), conn.RequestHeader()})
		if err != nil {
			return i.rejected(err, false)
		}
		defer p.Cancel()
		err = next(ctx, conn)
		p.Finish(integration.ServerOutcome(ctx, i.o.outcome(err)))
		return err
	}
}

// rejected returns the error of a call that the limiter rejected with err: a
// *connect.Error of the rejection code that unwraps to err, with Retry-After in a handler's.
// A call whose context was done before it asked for a slot was not rejected: it gets its
// context's code.
func (i *interceptor) rejected(err error, client bool) *connect.Error {
	if !errors.Is(err, adaptivelimit.ErrLimitExceeded) {
		return connect.NewError(code(err), err)
	}
	e := connect.NewError(i.o.code, err)
	if !client && i.retryAfter != "" {
		e.Meta().Set(RetryAfterKey, i.retryAfter)
	}
	return e
}
