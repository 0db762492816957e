package grpclimit

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// rejection is a rejected call's error: the limiter's, which matches
// adaptivelimit.ErrLimitExceeded, with the status of the rejection code.
type rejection struct {
	err    error
	status *status.Status
}

func rejected(err error, c codes.Code) error {
	return &rejection{err: err, status: status.New(c, err.Error())}
}

func (r *rejection) Error() string { return r.status.Err().Error() }

func (r *rejection) Unwrap() error { return r.err }

// GRPCStatus returns the rejection's status, for status.FromError and the server.
func (r *rejection) GRPCStatus() *status.Status { return r.status }
