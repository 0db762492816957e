package grpclimit

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/integration"
)

// DefaultOutcome is the default outcome of every interceptor, called with the error that
// ends a call. A nil error is a sample; an error that DropOn reports is a drop. Every other
// code frees the slot without a sample: Canceled and the caller's mistakes
// (InvalidArgument, NotFound, AlreadyExists, PermissionDenied, Unauthenticated,
// FailedPrecondition, ...) say nothing about load, and a failure (Internal, Unknown, ...) is
// not the latency of a healthy call. connectlimit's DefaultOutcome judges every code alike.
//
// On a server, a call whose caller is gone when its handler returns (it cancelled, or the
// deadline it sent passed) is adaptivelimit.Departed instead of a drop or nothing: the
// deadline is the caller's to send, so it may lower the limit only as Departed says.
func DefaultOutcome(err error) adaptivelimit.Outcome { return integration.CodeOutcome(err, code) }

// DropOn reports whether err is a drop as the interceptors count it: its code is
// DeadlineExceeded, ResourceExhausted or Unavailable. An error without a status, such as a
// handler's ctx.Err(), has the code of its context error. Set it as the limiter's
// Config.DropOn so that adaptivelimit.Do, Permit.Done and failsafelimit around gRPC calls
// count what the interceptors count: the core's DefaultDropOn does not read gRPC codes.
func DropOn(err error) bool { return integration.DropCode(code(err)) }

func code(err error) codes.Code {
	if s, ok := status.FromError(err); ok {
		return s.Code()
	}
	return status.FromContextError(err).Code()
}
