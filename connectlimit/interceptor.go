package connectlimit

import (
	"context"

	"connectrpc.com/connect"

	"github.com/resilience4cata/adaptivelimit"
)

// NewInterceptor returns an interceptor that runs each call inside l: as a handler's
// interceptor, the calls it serves; as a client's, the calls it sends. A call that finds the
// limit full is rejected without calling the handler or sending it. A unary call's latency
// is the handler's or the round trip's; a stream's runs until it ends. It panics if l is nil
// or an option is invalid.
func NewInterceptor(l *adaptivelimit.Limiter, opts ...Option) connect.Interceptor {
	if l == nil {
		panic("connectlimit: nil limiter")
	}
	o := newOptions(opts)
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
		if i.o.bypassed(ctx, spec) {
			return next(ctx, req)
		}
		var p adaptivelimit.Permit
		var err error
		if spec.IsClient {
			var class string
			var send bool
			if class, send, p, err = i.acquireClient(ctx); err == nil && send {
				req.Header().Set(i.o.header, class)
			}
		} else {
			ctx, p, err = i.acquireHandler(ctx, spec, req.Header())
		}
		if err != nil {
			return nil, i.rejected(err, spec.IsClient)
		}
		defer p.Cancel() // next or the classifier panicked: Finish has not cleared p
		resp, err := next(ctx, req)
		p.Finish(i.o.classify(err))
		return resp, err
	}
}

func (i *interceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		if i.o.bypassed(ctx, conn.Spec()) {
			return next(ctx, conn)
		}
		ctx, p, err := i.acquireHandler(ctx, conn.Spec(), conn.RequestHeader())
		if err != nil {
			return i.rejected(err, false)
		}
		defer p.Cancel()
		err = next(ctx, conn)
		p.Finish(i.o.classify(err))
		return err
	}
}

// rejected returns the error of a call that the limiter rejected with err: a
// *connect.Error of the rejection code that unwraps to err, with Retry-After in a handler's.
func (i *interceptor) rejected(err error, client bool) *connect.Error {
	e := connect.NewError(i.o.code, err)
	if !client && i.retryAfter != "" {
		e.Meta().Set(RetryAfterKey, i.retryAfter)
	}
	return e
}
