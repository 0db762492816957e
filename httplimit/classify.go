package httplimit

import (
	"context"
	"errors"
	"net/http"

	"github.com/resilience4cata/adaptivelimit"
)

// DefaultServerClassifier is Middleware's default classifier. A request whose client went
// away (its context is canceled) is ignored, since the handler may have stopped early; a 503
// or 504 written by the handler, or a request whose context's deadline passed, is a drop;
// any other 5xx is ignored, since it is not the latency of a healthy call; any other status
// is a sample.
func DefaultServerClassifier(r *http.Request, status int) adaptivelimit.Outcome {
	ctxErr := r.Context().Err()
	switch {
	case errors.Is(ctxErr, context.Canceled):
		return adaptivelimit.Ignore
	case status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout:
		return adaptivelimit.Drop
	case status >= 500:
		return adaptivelimit.Ignore
	case ctxErr != nil:
		return adaptivelimit.Drop
	}
	return adaptivelimit.Sample
}

// DefaultClientClassifier is Transport's default classifier, called with the response or
// the error of a round trip, and again with the error of a body read that failed. An error
// is a drop if it is a timeout (adaptivelimit.DefaultDropOn: a context deadline, a
// net.Error that timed out) and is ignored otherwise, context.Canceled included. A 429 or
// 503 answer is a drop; any other 4xx or 5xx answer is ignored; any other answer is a sample.
func DefaultClientClassifier(resp *http.Response, err error) adaptivelimit.Outcome {
	if err != nil {
		if adaptivelimit.DefaultDropOn(err) {
			return adaptivelimit.Drop
		}
		return adaptivelimit.Ignore
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
		return adaptivelimit.Drop
	case resp.StatusCode >= 400:
		return adaptivelimit.Ignore
	}
	return adaptivelimit.Sample
}
