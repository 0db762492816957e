package connectlimit

import (
	"context"
	"errors"
	"os"

	"connectrpc.com/connect"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/integration"
)

// DefaultOutcome is the default outcome, in a handler and in a client, called with the
// error that ends a call. A nil error is a sample; an error that DropOn reports is a drop.
// Every other code frees the slot without a sample: CodeCanceled and the caller's mistakes
// (CodeInvalidArgument, CodeNotFound, CodePermissionDenied, CodeUnauthenticated, ...) say
// nothing about load, and a failure (CodeInternal, CodeUnknown, ...) is not the latency of a
// healthy call. grpclimit's DefaultOutcome judges every code alike.
//
// In a handler, a call whose caller is gone when it returns (it cancelled, or the deadline
// it sent passed) is adaptivelimit.Departed instead of a drop or nothing: the deadline is the
// caller's to send, so it may lower the limit only as Departed says.
func DefaultOutcome(err error) adaptivelimit.Outcome { return integration.CodeOutcome(err, code) }

// DropOn reports whether err is a drop as the interceptor counts it: its code is
// CodeDeadlineExceeded, CodeResourceExhausted or CodeUnavailable. An error that is no
// *connect.Error, such as a handler's ctx.Err(), has the code of its context error. Set it
// as the limiter's Config.DropOn so that adaptivelimit.Do, Permit.Done and failsafelimit
// around connect calls count what the interceptor counts: the core's DefaultDropOn does not
// read connect codes.
func DropOn(err error) bool { return integration.DropCode(code(err)) }

func code(err error) connect.Code {
	var ce *connect.Error
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ce):
		return ce.Code()
	case errors.Is(err, context.Canceled):
		return connect.CodeCanceled
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return connect.CodeDeadlineExceeded
	}
	return connect.CodeUnknown
}
