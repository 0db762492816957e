package httplimit

import (
	"context"
	"errors"
	"net/http"

	"github.com/resilience4cata/adaptivelimit"
)

// overloaded reports whether a status says that the server was overloaded: 429 Too Many
// Requests, 503 Service Unavailable and 504 Gateway Timeout, on both sides (see
// docs/behaviour.md).
func overloaded(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable ||
		status == http.StatusGatewayTimeout
}

// DefaultServerOutcome is Middleware's default outcome. A request whose client went away
// (its context is canceled) is adaptivelimit.Departed: HTTP carries no deadline from the
// client, so a client that gives up waiting for a busy server says so only by going away,
// and the limiter counts that as a drop only while the requests it serves queue
// (adaptivelimit.Departed says when), since any client can go away at will. A request whose
// context's deadline passed, which only the server sets, is a drop. Otherwise the status
// decides, as DefaultClientOutcome decides from the same status: a 429, 503 or 504 is a
// drop; any other 4xx or 5xx is ignored, since a caller's mistake is often answered before
// the work the limit protects, and a failure is not the latency of a healthy call; any
// other status is a sample.
func DefaultServerOutcome(r *http.Request, status int) adaptivelimit.Outcome {
	ctxErr := r.Context().Err()
	switch {
	case errors.Is(ctxErr, context.Canceled):
		return adaptivelimit.Departed
	case ctxErr != nil:
		return adaptivelimit.Drop
	}
	return statusOutcome(status)
}

// DefaultClientOutcome is Transport's default outcome, called with the response or the
// error of a round trip, and again with the error of a body read that failed. An error is a
// drop if it is a timeout (adaptivelimit.DefaultDropOn: a context deadline, a net.Error that
// timed out) and is ignored otherwise, context.Canceled included. A 429, 503 or 504 answer
// is a drop; any other 4xx or 5xx answer is ignored; any other answer is a sample: as
// DefaultServerOutcome judges the same status.
func DefaultClientOutcome(resp *http.Response, err error) adaptivelimit.Outcome {
	if err != nil {
		if adaptivelimit.DefaultDropOn(err) {
			return adaptivelimit.Drop
		}
		return adaptivelimit.Ignore
	}
	return statusOutcome(resp.StatusCode)
}

// statusOutcome is the outcome of a call answered with status, on either side.
func statusOutcome(status int) adaptivelimit.Outcome {
	switch {
	case overloaded(status):
		return adaptivelimit.Drop
	case status >= 400:
		return adaptivelimit.Ignore
	}
	return adaptivelimit.Sample
}
