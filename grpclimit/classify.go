package grpclimit

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resilience4cata/adaptivelimit"
)

// DefaultClassifier is the default classifier of every interceptor, called with the error
// that ends a call. A nil error is a sample. DeadlineExceeded, ResourceExhausted and
// Unavailable are drops. Every other code frees the slot without a sample: Canceled and the
// caller's mistakes (InvalidArgument, NotFound, AlreadyExists, PermissionDenied,
// Unauthenticated, FailedPrecondition, ...) say nothing about load, and a failure (Internal,
// Unknown, ...) is not the latency of a healthy call. An error without a status, such as a
// handler's ctx.Err(), has the code of its context error.
func DefaultClassifier(err error) adaptivelimit.Outcome {
	if err == nil {
		return adaptivelimit.Sample
	}
	switch code(err) {
	case codes.DeadlineExceeded, codes.ResourceExhausted, codes.Unavailable:
		return adaptivelimit.Drop
	}
	return adaptivelimit.Ignore
}

func code(err error) codes.Code {
	if s, ok := status.FromError(err); ok {
		return s.Code()
	}
	return status.FromContextError(err).Code()
}
