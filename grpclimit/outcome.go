package grpclimit

import (
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resilience4cata/adaptivelimit"
)

// Outcome is what a finished call says about the load of the server that answered it.
type Outcome int

const (
	// Sample is a healthy call: its latency is a sample.
	Sample Outcome = iota
	// Drop is a call that the server was too loaded to serve: a sample marked as a drop.
	Drop
	// Ignore is a call that says nothing about load: its slot is freed without a sample.
	Ignore
)

// ErrOverloaded is the error that a call classified as a Drop finishes its permit with. It
// matches adaptivelimit.ErrLimitExceeded (the server shed the call, as a limit inside would),
// which adaptivelimit.DefaultDropOn counts as a drop; a limiter with its own DropOn counts
// these drops only if that DropOn accepts ErrOverloaded.
var ErrOverloaded = fmt.Errorf("grpclimit: the server is overloaded: %w", adaptivelimit.ErrLimitExceeded)

func (o Outcome) finish(p *adaptivelimit.Permit) {
	switch o {
	case Sample:
		p.Done(nil)
	case Drop:
		p.Done(ErrOverloaded)
	default:
		p.Cancel()
	}
}

// DefaultClassifier is the default classifier of every interceptor, called with the error
// that ends a call. A nil error is a sample. DeadlineExceeded, ResourceExhausted and
// Unavailable are drops. Every other code frees the slot without a sample: Canceled and the
// caller's mistakes (InvalidArgument, NotFound, AlreadyExists, PermissionDenied,
// Unauthenticated, FailedPrecondition, ...) say nothing about load, and a failure (Internal,
// Unknown, ...) is not the latency of a healthy call. An error without a status, such as a
// handler's ctx.Err(), has the code of its context error.
func DefaultClassifier(err error) Outcome {
	if err == nil {
		return Sample
	}
	switch code(err) {
	case codes.DeadlineExceeded, codes.ResourceExhausted, codes.Unavailable:
		return Drop
	}
	return Ignore
}

func code(err error) codes.Code {
	if s, ok := status.FromError(err); ok {
		return s.Code()
	}
	return status.FromContextError(err).Code()
}
