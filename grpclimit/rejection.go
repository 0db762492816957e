package grpclimit

import (
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resilience4cata/adaptivelimit"
)

// rejection is a rejected call's error: the limiter's, which matches
// adaptivelimit.ErrLimitExceeded, with the status of the rejection code.
type rejection struct {
	err    error
	status *status.Status
}

// A call whose context was done before it asked for a slot was not rejected: it gets its
// context's status.
func rejected(err error, c codes.Code) error {
	if !errors.Is(err, adaptivelimit.ErrLimitExceeded) {
		return status.FromContextError(err).Err()
	}
	return &rejection{err: err, status: status.New(c, err.Error())}
}

func (r *rejection) Error() string { return r.status.Err().Error() }

func (r *rejection) Unwrap() error { return r.err }

// GRPCStatus returns the rejection's status, for status.FromError and the server.
func (r *rejection) GRPCStatus() *status.Status { return r.status }
