package failsafelimit_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	"github.com/failsafe-go/failsafe-go/timeout"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/failsafelimit"
)

// The limit inside the retry, so that each attempt holds a slot, and outside the timeout,
// so that the attempt that times out is a drop; a full limit fails at once, without a retry.
func Example() {
	limiter, err := adaptivelimit.New(adaptivelimit.Config{Name: "inventory"})
	if err != nil {
		panic(err)
	}
	retry := retrypolicy.NewBuilder[string]().AbortOnErrors(adaptivelimit.ErrLimitExceeded).Build()
	executor := failsafe.With(retry, failsafelimit.New[string](limiter), timeout.New[string](20*time.Millisecond))

	stock, err := executor.GetWithExecution(func(exec failsafe.Execution[string]) (string, error) {
		fmt.Printf("attempt %d: %d in flight\n", exec.Attempts(), limiter.InFlight())
		if exec.Attempts() == 1 { // the first attempt hangs until its timeout
			<-exec.Canceled()
			return "", exec.Context().Err()
		}
		return "in stock", nil
	})
	fmt.Println(stock, err, limiter.InFlight())
	// Output:
	// attempt 1: 1 in flight
	// attempt 2: 1 in flight
	// in stock <nil> 0
}

// A circuit breaker that ignores rejections: the limiter's answer says nothing about the
// dependency.
func Example_circuitBreaker() {
	limiter, err := adaptivelimit.New(adaptivelimit.Config{Name: "payments", InitialLimit: 1, MinLimit: 1, MaxLimit: 1})
	if err != nil {
		panic(err)
	}
	breaker := circuitbreaker.NewBuilder[any]().
		HandleIf(func(_ any, err error) bool { return err != nil && !errors.Is(err, adaptivelimit.ErrLimitExceeded) }).
		WithFailureThreshold(1).
		Build()
	executor := failsafe.With(breaker, failsafelimit.New[any](limiter))

	held, _ := limiter.Acquire() // another call fills the limit
	for range 3 {
		err := executor.Run(func() error { return nil })
		fmt.Println(errors.Is(err, adaptivelimit.ErrLimitExceeded), breaker.State())
	}
	held.Done(nil)
	fmt.Println(executor.Run(func() error { return nil }), breaker.State())
	fmt.Println(executor.Run(func() error { return errors.New("declined") }), breaker.State())
	// Output:
	// true closed
	// true closed
	// true closed
	// <nil> closed
	// declined open
}
