package integration

import (
	"context"

	"github.com/resilience4cata/adaptivelimit"
)

// ServerOutcome returns o, the outcome of a call that a server admitted with ctx, as
// adaptivelimit.Departed where o is not a Sample and ctx is done: the caller went away, or
// the deadline it sent passed. Either is the caller's to send, at will and at any rate, so it
// may lower the limit only as Departed says. A Sample stays one: the handler finished.
func ServerOutcome(ctx context.Context, o adaptivelimit.Outcome) adaptivelimit.Outcome {
	if o != adaptivelimit.Sample && ctx.Err() != nil {
		return adaptivelimit.Departed
	}
	return o
}
