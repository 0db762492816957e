package integration

import (
	"context"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/internal/hook"
)

// Waits reports whether l's callers of AcquireContext may wait for a slot: whether its
// Config.MaxWait is set. Where it is not, AcquireContext takes a slot as Acquire does, and a
// server can take its call's slot for a class with AcquireClass, without first building the
// context that carries the class: so that a rejection costs what it did before waiting was
// possible. It panics if l is nil.
func Waits(l *adaptivelimit.Limiter) bool { return hook.Waits(l) }

// AcquireClass takes a slot of l for a server's call of class (see adaptivelimit.WithClass)
// whose context is ctx, and returns the context its handler gets: with the class in it. Where
// l may wait (Waits), it waits as AcquireContext does, bounded by ctx; otherwise it takes the
// slot as AcquireClass does, and builds the class's context only for an admitted call. A
// class of "" takes the slot of ctx's own class, the lowest where it has none.
func AcquireClass(ctx context.Context, l *adaptivelimit.Limiter, class string) (context.Context, adaptivelimit.Permit, error) {
	if class == "" {
		p, err := l.AcquireContext(ctx)
		return ctx, p.Move(), err
	}
	if !hook.Waits(l) {
		p, err := l.AcquireClass(class)
		if err != nil {
			return ctx, p.Move(), err
		}
		return adaptivelimit.WithClass(ctx, class), p.Move(), nil
	}
	ctx = adaptivelimit.WithClass(ctx, class)
	p, err := l.AcquireContext(ctx)
	return ctx, p.Move(), err
}
