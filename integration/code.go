package integration

import "github.com/resilience4cata/adaptivelimit"

// The gRPC status codes that are drops. connect's codes equal gRPC's
// (connect.CodeDeadlineExceeded is codes.DeadlineExceeded, and so on), so one table serves both.
const (
	codeDeadlineExceeded  = 4
	codeResourceExhausted = 8
	codeUnavailable       = 14
)

// DropCode reports whether code, a gRPC status code or a connect one, is a drop:
// DeadlineExceeded, ResourceExhausted or Unavailable.
func DropCode[C ~uint32](code C) bool {
	switch code {
	case codeDeadlineExceeded, codeResourceExhausted, codeUnavailable:
		return true
	}
	return false
}

// CodeOutcome returns the outcome of a gRPC or connect call that ended with err, whose
// status code code reads:
//   - nil is adaptivelimit.Sample;
//   - an error whose code DropCode reports is adaptivelimit.Drop;
//   - any other is adaptivelimit.Ignore: a cancellation or a caller's mistake says nothing
//     about load, and a failure is not the latency of a healthy call.
func CodeOutcome[C ~uint32](err error, code func(error) C) adaptivelimit.Outcome {
	switch {
	case err == nil:
		return adaptivelimit.Sample
	case DropCode(code(err)):
		return adaptivelimit.Drop
	}
	return adaptivelimit.Ignore
}
