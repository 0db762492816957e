package connectlimit

import (
	"context"
	"errors"
	"os"

	"connectrpc.com/connect"

	"github.com/resilience4cata/adaptivelimit"
)

// DefaultClassifier is the default classifier, called with the error that ends a call. A
// nil error is a sample. CodeDeadlineExceeded, CodeResourceExhausted and CodeUnavailable
// are drops. Every other code frees the slot without a sample: CodeCanceled and the
// caller's mistakes (CodeInvalidArgument, CodeNotFound, CodePermissionDenied,
// CodeUnauthenticated, ...) say nothing about load, and a failure (CodeInternal,
// CodeUnknown, ...) is not the latency of a healthy call. An error that is no
// *connect.Error, such as a handler's ctx.Err(), has the code of its context error.
func DefaultClassifier(err error) adaptivelimit.Outcome {
	if err == nil {
		return adaptivelimit.Sample
	}
	switch code(err) {
	case connect.CodeDeadlineExceeded, connect.CodeResourceExhausted, connect.CodeUnavailable:
		return adaptivelimit.Drop
	}
	return adaptivelimit.Ignore
}

func code(err error) connect.Code {
	var ce *connect.Error
	switch {
	case errors.As(err, &ce):
		return ce.Code()
	case errors.Is(err, context.Canceled):
		return connect.CodeCanceled
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return connect.CodeDeadlineExceeded
	}
	return connect.CodeUnknown
}
