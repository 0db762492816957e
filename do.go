package adaptivelimit

import "context"

// Do runs fn inside l: it takes a slot, runs fn and finishes the permit with fn's error. A
// full limit returns l's *LimitExceededError without running fn, and a done ctx returns its
// error without taking a slot. If fn panics, the slot is freed without a sample and the panic
// goes on.
func Do[T any](ctx context.Context, l *Limiter, fn func(context.Context) (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	p, err := l.Acquire()
	if err != nil {
		return zero, err
	}
	finished := false
	defer func() {
		if !finished {
			p.Cancel()
		}
	}()
	v, err := fn(ctx)
	finished = true
	p.Done(err)
	return v, err
}
