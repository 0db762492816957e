package adaptivelimit

import "context"

// Do runs fn inside l: it takes a slot with AcquireContext, runs fn and finishes the permit
// with fn's error. A full limit returns an error matching ErrLimitExceeded without running fn,
// at once by default, or after waiting up to Config.MaxWait where set. A done ctx returns its
// error without a slot. If fn panics, the slot is freed without a sample and the panic goes on.
func Do[T any](ctx context.Context, l *Limiter, fn func(context.Context) (T, error)) (T, error) {
	var zero T
	p, err := l.AcquireContext(ctx)
	if err != nil {
		return zero, err
	}
	defer p.Cancel() // fn panicked: Done has not cleared p
	v, err := fn(ctx)
	p.Done(err)
	return v, err
}
