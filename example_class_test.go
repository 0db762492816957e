package adaptivelimit_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/resilience4cata/adaptivelimit"
)

// Under a full limit the lowest class is shed, while the critical class keeps the never-lent
// part of its reserve: 2 of its 3 slots (the other one is lent while critical is not turned
// away).
func ExampleLimiter_AcquireClass() {
	limiter, _ := adaptivelimit.New(adaptivelimit.Config{
		Name: "api", InitialLimit: 10, MinLimit: 10, MaxLimit: 10,
		Classes: []adaptivelimit.Class{{Name: "critical", Reserve: 0.3}, {Name: "sheddable"}},
	})
	var batch []adaptivelimit.Permit
	for {
		p, err := limiter.AcquireClass("sheddable") // Acquire would do the same: the lowest class
		if err != nil {
			break
		}
		batch = append(batch, p.Move()) // a permit is moved, not copied
	}
	fmt.Println("sheddable calls admitted:", len(batch))

	ctx := adaptivelimit.WithClass(context.Background(), "critical")
	_, err := adaptivelimit.Do(ctx, limiter, func(context.Context) (string, error) { return "paid", nil })
	fmt.Println("critical call:", err)
	for _, c := range limiter.Snapshot().Classes {
		fmt.Printf("%s: reserved %d, in flight %d, rejected %d\n", c.Name, c.Reserved, c.InFlight, c.Rejected)
	}
	for i := range batch {
		batch[i].Done(nil)
	}

	_, err = adaptivelimit.New(adaptivelimit.Config{Name: "api",
		Classes: []adaptivelimit.Class{{Name: "critical", Reserve: 0.6}, {Name: "standard", Reserve: 0.5}}})
	fmt.Println(err, errors.Is(err, adaptivelimit.ErrInvalidTuning))
	// Output:
	// sheddable calls admitted: 8
	// critical call: <nil>
	// critical: reserved 3, in flight 0, rejected 0
	// sheddable: reserved 0, in flight 8, rejected 1
	// R4C-REG-001: adaptive limit "api": classes = critical:0.6,standard:0.5: the reserves add up to 1.1: at most 1 true
}
