package adaptivelimit_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/resilience4cata/adaptivelimit"
)

func backendSearch(query string) (string, error) { return "results for " + query, nil }

// Wrap each call to a dependency with Acquire and Done. A full limit rejects at once.
func Example() {
	limiter, err := adaptivelimit.New(adaptivelimit.Config{Name: "search"})
	if err != nil {
		panic(err)
	}
	search := func(query string) (string, error) {
		permit, err := limiter.Acquire()
		if err != nil {
			return "", err // the limit is full: fail fast, do not queue
		}
		result, err := backendSearch(query)
		permit.Done(err) // nil: a latency sample; a timeout: a drop; other errors: no sample
		return result, err
	}
	fmt.Println(search("go"))
	// Output: results for go <nil>
}

// Do runs a function inside the limit, and frees the slot even if the function panics.
func ExampleDo() {
	limiter, _ := adaptivelimit.New(adaptivelimit.Config{Name: "orders"})
	order, err := adaptivelimit.Do(context.Background(), limiter, func(ctx context.Context) (string, error) {
		return "order 42 placed", nil
	})
	fmt.Println(order, err, limiter.InFlight())
	// Output: order 42 placed <nil> 0
}

// On a ManualClock, latencies are what the clock says and windows end when it passes them,
// so a test sees the same limits on every run.
func ExampleManualClock() {
	clock := adaptivelimit.NewManualClock()
	limiter, _ := adaptivelimit.New(adaptivelimit.Config{
		Name: "orders-async", InitialLimit: 2, MinWindowSamples: 1, Clock: clock,
	})
	a, _ := limiter.Acquire() // pending: holds a slot
	b, _ := limiter.Acquire() // pending: holds the other
	_, err := limiter.Acquire()
	fmt.Println(errors.Is(err, adaptivelimit.ErrLimitExceeded))

	clock.Advance(time.Second) // the calls took 1 s; the window is over
	a.Done(nil)                // ends the window
	b.Done(nil)
	s := limiter.Snapshot()
	fmt.Println(s.Windows, s.WindowLatency)
	// Output:
	// true
	// 1 1s
}

// With MaxWait set, a caller of AcquireContext (or Do) waits for a slot where the limit is
// full, and a freed slot goes to it rather than to a new caller. Its latency runs from taking
// the slot: the wait is not part of it.
func ExampleLimiter_AcquireContext() {
	clock := adaptivelimit.NewManualClock()
	limiter, _ := adaptivelimit.New(adaptivelimit.Config{
		Name: "batch", InitialLimit: 1, MaxLimit: 1, MinWindowSamples: 1, MaxWait: time.Minute, Clock: clock,
	})
	running, _ := limiter.Acquire() // holds the only slot

	done, finished := make(chan error), make(chan struct{})
	go func() {
		permit, err := limiter.AcquireContext(context.Background()) // waits
		if err == nil {
			<-finished                 // the running call has finished
			clock.Advance(time.Second) // the call takes 1 s
			permit.Done(nil)
		}
		done <- err
	}()
	for limiter.Snapshot().Waiting == 0 {
		runtime.Gosched() // until the goroutine waits
	}
	_, err := limiter.Acquire()
	fmt.Println("a new caller is rejected:", errors.Is(err, adaptivelimit.ErrLimitExceeded))

	clock.Advance(2 * time.Second) // the running call takes 2 s
	running.Done(nil)              // and hands its slot to the waiter
	close(finished)
	fmt.Println("the waiter:", <-done)
	fmt.Println("its latency:", limiter.Snapshot().WindowLatency)
	// Output:
	// a new caller is rejected: true
	// the waiter: <nil>
	// its latency: 1s
}

// AIMD backs off after a window with a drop: here a per-call timeout inside the limit.
func ExampleConfig_aimd() {
	clock := adaptivelimit.NewManualClock()
	limiter, _ := adaptivelimit.New(adaptivelimit.Config{
		Name: "orders-aimd", Algorithm: adaptivelimit.AIMD, InitialLimit: 10, MinWindowSamples: 1, Clock: clock,
		OnLimitChange: func(name string, d adaptivelimit.Decision) {
			fmt.Printf("%s: %d -> %d (%s)\n", name, d.LimitBefore, d.LimitAfter, d.Cause)
		},
	})
	for _, outcome := range []error{context.DeadlineExceeded, nil} {
		permits := make([]adaptivelimit.Permit, 6)
		for i := range permits {
			permits[i], _ = limiter.Acquire()
		}
		clock.Advance(time.Second)
		permits[0].Done(outcome) // ends the window
		for i := 1; i < len(permits); i++ {
			permits[i].Done(nil) // in place: finishing a copy would leave permits[i] held
		}
	}
	// Output:
	// orders-aimd: 10 -> 9 (drop)
	// orders-aimd: 9 -> 10 (growth)
}

// Vegas learns the no-load latency from its first window, grows while latency stays near it
// and shrinks once latency shows a queue: here 30 ms against 10 ms, a queue of 18 calls.
func ExampleConfig_vegas() {
	clock := adaptivelimit.NewManualClock()
	limiter, _ := adaptivelimit.New(adaptivelimit.Config{
		Name: "orders-vegas", Algorithm: adaptivelimit.Vegas, MinWindowSamples: 1, Clock: clock,
		OnLimitChange: func(name string, d adaptivelimit.Decision) {
			fmt.Printf("%s: %d -> %d at %v (no-load %v)\n", name, d.LimitBefore, d.LimitAfter, d.MeanLatency, d.LongLatency)
		},
	})
	// Each round uses every slot, and its calls end with a window. The first call to finish
	// closes the window; the others fall in the next one, so each latency runs two rounds.
	for _, latency := range []time.Duration{10, 10, 30, 30} {
		latency *= time.Millisecond
		clock.Advance(time.Second - latency)
		permits := make([]adaptivelimit.Permit, limiter.Limit())
		for i := range permits {
			permits[i], _ = limiter.Acquire()
		}
		clock.Advance(latency)
		for i := range permits {
			permits[len(permits)-1-i].Done(nil) // the last taken saw every slot in use
		}
	}
	// Output:
	// orders-vegas: 20 -> 26 at 10ms (no-load 10ms)
	// orders-vegas: 26 -> 25 at 30ms (no-load 10ms)
}

// LossDelay's first window filled its limit, so a short probe follows at half of it: it waits
// for the calls admitted before it, then measures those admitted at half the limit. The
// latency does not fall, it was the no-load latency: the baseline is measured, and the limit
// comes back doubled, as the full window before would have had it known the baseline. Then the
// limit doubles while latency holds; a window in which most calls time out halves it and
// teaches the baseline nothing. Every decision says why.
func ExampleConfig_lossDelay() {
	clock := adaptivelimit.NewManualClock()
	limiter, _ := adaptivelimit.New(adaptivelimit.Config{
		Name: "orders-ld", Algorithm: adaptivelimit.LossDelay, MinWindowSamples: 1, Clock: clock,
		OnLimitChange: func(name string, d adaptivelimit.Decision) {
			fmt.Printf("%s: %d -> %d (%s, baseline %v)\n", name, d.LimitBefore, d.LimitAfter, d.Cause, d.LongLatency)
		},
	})
	// Each round uses every slot for 10 ms. The first call to finish closes the window; the
	// others fall in the next one. A probe's wait ends with the first call of the round after
	// it begins, and its measure with the first call of the round after that. The fifth
	// round's timeouts count in the sixth window.
	for _, err := range []error{nil, nil, nil, nil, context.DeadlineExceeded, nil} {
		clock.Advance(time.Second - 10*time.Millisecond)
		permits := make([]adaptivelimit.Permit, limiter.Limit())
		for i := range permits {
			permits[i], _ = limiter.Acquire()
		}
		clock.Advance(10 * time.Millisecond)
		for i := range permits {
			permits[len(permits)-1-i].Done(err) // the last taken saw every slot in use
		}
	}
	// Output:
	// orders-ld: 20 -> 10 (probe, baseline 0s)
	// orders-ld: 10 -> 40 (probe, baseline 10ms)
	// orders-ld: 40 -> 80 (growth, baseline 10ms)
	// orders-ld: 80 -> 160 (growth, baseline 10ms)
	// orders-ld: 160 -> 80 (drop, baseline 10ms)
}

// Configuration errors carry a code and name the key, the value and the rule.
func ExampleConfigError() {
	_, err := adaptivelimit.New(adaptivelimit.Config{Name: "orders", MinLimit: 10, MaxLimit: 5})
	var ce *adaptivelimit.ConfigError
	if errors.As(err, &ce) {
		fmt.Println(ce.Code())
	}
	fmt.Println(err)
	// Output:
	// R4C-ATR-009
	// R4C-ATR-009: adaptive limit "orders": minLimit = 10: must not exceed maxLimit (5)
}

// A registry makes limiters by instance id, from named configurations and external keys, and
// shares one among the call sites that give the same name.
func ExampleRegistry() {
	props, err := adaptivelimit.ParseProperties(strings.NewReader(`
defaults.adaptiveLimit.maxLimit=100
configs.backend.adaptiveLimit.algorithm=aimd
configs.backend.adaptiveLimit.backoffRatio=0.8
instances.orders.adaptiveLimit.initialLimit=10
`))
	if err != nil {
		panic(err)
	}
	registry, err := adaptivelimit.NewRegistry(adaptivelimit.RegistryConfig{
		Configs:    map[string]adaptivelimit.Config{"backend": {MinWindowSamples: 20}},
		Properties: props,
	})
	if err != nil {
		panic(err) // a *ConfigError naming the key, its line, the value and the rule
	}
	place, _ := registry.Limiter("OrderClient.place", adaptivelimit.Site{Name: "orders", Config: "backend"})
	cancel, _ := registry.Limiter("OrderClient.cancel", adaptivelimit.Site{Name: "orders", Config: "backend"})
	registry.Limiter("SearchClient.search", adaptivelimit.Site{Attrs: adaptivelimit.Config{MaxLimit: 50}})
	fmt.Println(place == cancel)

	orders, _ := registry.Get("orders")
	permit, _ := orders.Acquire()
	for _, s := range registry.Snapshot() {
		fmt.Printf("%s: %s, limit %d in [%d, %d], %d in flight\n", s.Name, s.Algorithm, s.Limit, s.MinLimit, s.MaxLimit, s.InFlight)
	}
	permit.Done(nil)
	// Output:
	// true
	// SearchClient.search: gradient2, limit 20 in [1, 50], 0 in flight
	// orders: aimd, limit 10 in [1, 100], 1 in flight
}
