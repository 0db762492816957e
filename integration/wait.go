package integration

import (
	"context"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/internal/hook"
)

// A ClassAcquirer takes the slots of a server's calls for their priority classes (see
// adaptivelimit.WithClass). Where its limiter may wait (Config.MaxWait), a call waits as
// AcquireContext does, bounded by its context; otherwise the slot is taken as AcquireClass
// takes it, and the class's context is built only for an admitted call, so that a rejection
// costs what it costs without waiting. Whether the limiter may wait is read once, by
// NewClassAcquirer: a limiter's Config does not change.
type ClassAcquirer struct {
	l     *adaptivelimit.Limiter
	waits bool
}

// NewClassAcquirer returns the ClassAcquirer of l. It makes l time every call, even where its
// algorithm reads no latency (AIMD), since a server judges its callers' departures by how long
// they ran (adaptivelimit.Departed, ServerOutcome). It panics if l is nil.
func NewClassAcquirer(l *adaptivelimit.Limiter) ClassAcquirer {
	hook.TimeCalls(l)
	return ClassAcquirer{l: l, waits: hook.Waits(l)}
}

// Acquire takes a slot for a call of class whose context is ctx, and returns the context its
// handler gets: with the class in it. A class of "" takes the slot of ctx's own class, the
// lowest where it has none.
func (a *ClassAcquirer) Acquire(ctx context.Context, class string) (context.Context, adaptivelimit.Permit, error) {
	if class == "" {
		p, err := a.l.AcquireContext(ctx)
		return ctx, p.Move(), err
	}
	if !a.waits {
		p, err := a.l.AcquireClass(class)
		if err != nil {
			return ctx, p.Move(), err
		}
		return adaptivelimit.WithClass(ctx, class), p.Move(), nil
	}
	ctx = adaptivelimit.WithClass(ctx, class)
	p, err := a.l.AcquireContext(ctx)
	return ctx, p.Move(), err
}
