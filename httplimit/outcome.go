package httplimit

import (
	"context"
	"errors"
	"fmt"
	"net/http"

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
var ErrOverloaded = fmt.Errorf("httplimit: the server is overloaded: %w", adaptivelimit.ErrLimitExceeded)

// finish finishes p with o.
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

// DefaultServerClassifier is Middleware's default classifier. A request whose client went
// away (its context is canceled) is ignored, since the handler may have stopped early; a 503
// or 504 written by the handler, or a request whose context's deadline passed, is a drop;
// any other 5xx is ignored, since it is not the latency of a healthy call; any other status
// is a sample.
func DefaultServerClassifier(r *http.Request, status int) Outcome {
	ctxErr := r.Context().Err()
	switch {
	case errors.Is(ctxErr, context.Canceled):
		return Ignore
	case status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout:
		return Drop
	case status >= 500:
		return Ignore
	case ctxErr != nil:
		return Drop
	}
	return Sample
}

// DefaultClientClassifier is Transport's default classifier, called with the response or
// the error of a round trip, and again with the error of a body read that failed. An error
// is a drop if it is a timeout (adaptivelimit.DefaultDropOn: a context deadline, a
// net.Error that timed out) and is ignored otherwise, context.Canceled included. A 429 or
// 503 answer is a drop; any other 4xx or 5xx answer is ignored; any other answer is a sample.
func DefaultClientClassifier(resp *http.Response, err error) Outcome {
	if err != nil {
		if adaptivelimit.DefaultDropOn(err) {
			return Drop
		}
		return Ignore
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
		return Drop
	case resp.StatusCode >= 400:
		return Ignore
	}
	return Sample
}
