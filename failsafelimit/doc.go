// Package failsafelimit puts an adaptive limit into a failsafe-go execution, as a
// [failsafe.Policy] that composes with its retries, hedges, timeouts and circuit breakers.
//
// Each execution that the policy handles takes a permit of the limiter (with
// AcquireContext, so it waits up to Config.MaxWait where that is set), runs the inner
// policies and the function, and finishes the permit with the result's error: a nil error
// is a sample, an error the limiter's DropOn accepts is a drop (so is a timeout.ErrExceeded
// from a Timeout inside the limit), and any other error frees the slot without a sample. An
// execution that was cancelled (its context, a Timeout or a Hedge outside the limit) frees
// its slot without a sample, as does one whose function panics; the panic goes on. A full
// limit fails the execution at once, without running the inner policies, with an error that
// matches adaptivelimit.ErrLimitExceeded.
//
// # Where it goes in a chain
//
// failsafe.With(outer, ..., inner) runs outer(...(inner(fn))). Put the limit inside
// RetryPolicy and Hedge, so that each attempt holds a slot of its own while it runs and
// frees it before the retry's delay, and outside Timeout, so that an attempt that times out
// is a drop:
//
//	failsafe.With(fallback, retryPolicy, circuitBreaker, failsafelimit.New[R](limiter), timeout)
//
// A rejection is the limiter's answer, not the dependency's: tell the circuit breaker to
// ignore it, and the retry policy too where a full limit should fail at once:
//
//	notRejected := func(_ R, err error) bool { return err != nil && !errors.Is(err, adaptivelimit.ErrLimitExceeded) }
//	circuitBreaker := circuitbreaker.NewBuilder[R]().HandleIf(notRejected).Build()
//	retryPolicy := retrypolicy.NewBuilder[R]().AbortOnErrors(adaptivelimit.ErrLimitExceeded).Build()
//
// An execution whose context holds failsafe's policy.CheckOnlyKey (failsafegrpc's
// ServerInHandle) only checks for a free slot: it takes one and frees it at once.
package failsafelimit
