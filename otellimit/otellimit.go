// Package otellimit exports adaptive limits as OpenTelemetry metrics.
//
// Register creates observable instruments, read from each limiter's Snapshot when the
// meter provider collects, so that they add nothing to the calls. Each observation carries
// the limiter's name in the attribute "name":
//
//	r4c.calls.rejected                  counter {call}, with kind=adaptivelimit: calls rejected
//	r4c.adaptivelimit.limit.changes     counter {change}: windows that moved the limit
//	r4c.adaptivelimit.windows           counter {window}: windows that recomputed the limit
//	r4c.adaptivelimit.limit             gauge {call}: calls that may run at once
//	r4c.adaptivelimit.concurrent.calls  gauge {call}: calls that hold a slot
//	r4c.adaptivelimit.window.latency    gauge s: the last window's mean latency
//
// A limiter with priority classes has per-class instruments too (see class.go's list), with
// the class's name in the attribute "class".
package otellimit

import (
	"slices"

	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/resilience4cata/adaptivelimit"
)

// ScopeName is the instrumentation scope of the instruments: the package's import path.
const ScopeName = "github.com/resilience4cata/adaptivelimit/otellimit"

// Register creates the instruments in mp's meter for ScopeName and observes the limiters
// at each collection. Unregister the returned Registration to stop observing them.
func Register(mp metric.MeterProvider, limiters ...*adaptivelimit.Limiter) (metric.Registration, error) {
	limiters = slices.Clone(limiters)
	return register(mp, func() []adaptivelimit.Snapshot { return adaptivelimit.Snapshots(limiters...) })
}

// RegisterRegistry is Register for every limiter of r, those that r creates after the
// registration included.
func RegisterRegistry(mp metric.MeterProvider, r *adaptivelimit.Registry) (metric.Registration, error) {
	return register(mp, r.Snapshot)
}

var kind = attribute.String("kind", "adaptivelimit")

// register observes the snapshots that source returns at each collection.
func register(mp metric.MeterProvider, source func() []adaptivelimit.Snapshot) (metric.Registration, error) {
	m := mp.Meter(ScopeName)
	rejected, err1 := m.Int64ObservableCounter("r4c.calls.rejected", metric.WithUnit("{call}"),
		metric.WithDescription("Calls rejected at once because the limit was full; in a dry run, calls that would have been."))
	changes, err2 := m.Int64ObservableCounter("r4c.adaptivelimit.limit.changes", metric.WithUnit("{change}"),
		metric.WithDescription("Windows that moved the adaptive limit."))
	windows, err3 := m.Int64ObservableCounter("r4c.adaptivelimit.windows", metric.WithUnit("{window}"),
		metric.WithDescription("Windows that recomputed the adaptive limit."))
	limit, err4 := m.Int64ObservableGauge("r4c.adaptivelimit.limit", metric.WithUnit("{call}"),
		metric.WithDescription("How many calls may run at once."))
	concurrent, err5 := m.Int64ObservableGauge("r4c.adaptivelimit.concurrent.calls", metric.WithUnit("{call}"),
		metric.WithDescription("How many calls hold a slot now."))
	latency, err6 := m.Float64ObservableGauge("r4c.adaptivelimit.window.latency", metric.WithUnit("s"),
		metric.WithDescription("Mean latency of the calls in the last window that recomputed the limit."))
	if err := errors.Join(err1, err2, err3, err4, err5, err6); err != nil {
		return nil, err
	}
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for _, s := range source() {
			name := attribute.String("name", s.Name)
			withName := metric.WithAttributeSet(attribute.NewSet(name))
			o.ObserveInt64(rejected, int64(s.Rejected), metric.WithAttributeSet(attribute.NewSet(kind, name)))
			o.ObserveInt64(changes, int64(s.LimitChanges), withName)
			o.ObserveInt64(windows, int64(s.Windows), withName)
			o.ObserveInt64(limit, int64(s.Limit), withName)
			o.ObserveInt64(concurrent, int64(s.InFlight), withName)
			o.ObserveFloat64(latency, s.WindowLatency.Seconds(), withName)
		}
		return nil
	}, rejected, changes, windows, limit, concurrent, latency)
	if err != nil {
		return nil, err
	}
	return registerClasses(m, source, reg)
}
