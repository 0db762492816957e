package adaptivelimit_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/resilience4cata/adaptivelimit"
)

// Where a call is classified by a status rather than an error (an HTTP or gRPC answer),
// Finish says what it was: a Sample, a Drop (the dependency is overloaded) or Ignore (the
// answer says nothing about load).
func ExamplePermit_Finish() {
	clock := adaptivelimit.NewManualClock()
	limiter, _ := adaptivelimit.New(adaptivelimit.Config{
		Name: "inventory", MinWindowSamples: 1, Clock: clock,
	})
	for _, status := range []int{200, 404, 503} {
		permit, _ := limiter.Acquire()
		clock.Advance(10 * time.Millisecond)
		switch {
		case status == 503:
			permit.Finish(adaptivelimit.Drop)
		case status >= 400:
			permit.Finish(adaptivelimit.Ignore)
		default:
			permit.Finish(adaptivelimit.Sample)
		}
	}
	s := limiter.Snapshot()
	fmt.Println("successes:", s.Successes, "drops:", s.Drops, "ignored:", s.Ignored)
	// Output:
	// successes: 1 drops: 1 ignored: 1
}

// A dry run computes the limit and counts the calls it would reject, but admits every call:
// a way to watch the limit on real traffic before enforcing it.
func ExampleConfig_dryRun() {
	limiter, _ := adaptivelimit.New(adaptivelimit.Config{Name: "search", InitialLimit: 2, DryRun: true})
	var permits []adaptivelimit.Permit
	for range 3 {
		permit, err := limiter.Acquire() // never rejected in a dry run
		fmt.Println("admitted:", err == nil)
		permits = append(permits, permit.Move()) // a permit is moved, not copied
	}
	for i := range permits {
		permits[i].Done(nil)
	}
	fmt.Println("would have rejected:", limiter.Snapshot().Rejected)
	// Output:
	// admitted: true
	// admitted: true
	// admitted: true
	// would have rejected: 1
}

// ParseProperties reads the keys of a .properties file, for RegistryConfig.Properties:
// comments, '=' or ':' separators and continued lines included.
func ExampleParseProperties() {
	props, err := adaptivelimit.ParseProperties(strings.NewReader(`
# operators' overrides
defaults.adaptiveLimit.maxLimit = 100
instances.orders.adaptiveLimit.algorithm: aimd
instances.orders.adaptiveLimit.initialLimit=\
    10
`))
	if err != nil {
		panic(err)
	}
	registry, err := adaptivelimit.NewRegistry(adaptivelimit.RegistryConfig{Properties: props})
	if err != nil {
		panic(err)
	}
	orders, _ := registry.Limiter("OrderClient.place", adaptivelimit.Site{Name: "orders"})
	s := orders.Snapshot()
	fmt.Println(len(props), s.Algorithm, s.Limit, s.MaxLimit)
	// Output:
	// 3 aimd 10 100
}
