// Package otellimit exports adaptive limits as OpenTelemetry metrics.
//
// Register creates observable instruments, read from each limiter's Snapshot when the
// meter provider collects, so that they add nothing to the calls. Each observation carries
// the limiter's name in the attribute "name". The instruments, their attributes and what
// each counts are in one table, docs/metrics.md in the repository
// (https://github.com/resilience4cata/adaptivelimit/blob/main/docs/metrics.md), beside the
// Prometheus series of promlimit that they match.
package otellimit

import (
	"context"
	"errors"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/integration"
)

// ScopeName is the instrumentation scope of the instruments: the package's import path.
const ScopeName = "github.com/resilience4cata/adaptivelimit/otellimit"

// Register creates the instruments in mp's meter for ScopeName and observes the limiters
// at each collection. Unregister the returned Registration to stop observing them. Two
// limiters with the same name, among limiters or beside those that an earlier Register in
// mp observes, would make the same observations, so Register fails with an error that names
// the name.
func Register(mp metric.MeterProvider, limiters ...*adaptivelimit.Limiter) (metric.Registration, error) {
	limiters = slices.Clone(limiters)
	release, err := claim(mp, limiters)
	if err != nil {
		return nil, err
	}
	reg, err := register(mp, func() []adaptivelimit.Snapshot { return integration.Snapshots(limiters...) })
	if err != nil {
		release()
		return nil, err
	}
	return &releasing{reg: reg, release: release}, nil
}

// RegisterRegistry is Register for every limiter of r, those that r creates after the
// registration included.
func RegisterRegistry(mp metric.MeterProvider, r *adaptivelimit.Registry) (metric.Registration, error) {
	return register(mp, r.Snapshot)
}

var kind = attribute.String("kind", "adaptivelimit")

// outcomes are the values of the calls' attribute "outcome".
var outcomes = [...]attribute.KeyValue{
	attribute.String("outcome", "success"), attribute.String("outcome", "drop"), attribute.String("outcome", "ignored"),
	attribute.String("outcome", "cancelled"), attribute.String("outcome", "rejected"),
}

// directions are the values of the decisions' attribute "direction", in the order of
// Snapshot.Decisions' results.
var directions = [...]attribute.KeyValue{
	attribute.String("direction", "kept"), attribute.String("direction", "up"), attribute.String("direction", "down"),
}

// instruments are the observable instruments, created in one meter.
type instruments struct {
	rejected, changes, windows, calls, decisions, abandoned, dryRun metric.Int64ObservableCounter
	limit, concurrent, waiting, maxConcurrent, minLimit, maxLimit   metric.Int64ObservableGauge
	latency, baseline, exact                                        metric.Float64ObservableGauge
}

func newInstruments(m metric.Meter) (*instruments, error) {
	var in instruments
	var errs []error
	counter := func(name, unit, description string) metric.Int64ObservableCounter {
		c, err := m.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(description))
		errs = append(errs, err)
		return c
	}
	gauge := func(name, unit, description string) metric.Int64ObservableGauge {
		g, err := m.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(description))
		errs = append(errs, err)
		return g
	}
	real := func(name, unit, description string) metric.Float64ObservableGauge {
		g, err := m.Float64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(description))
		errs = append(errs, err)
		return g
	}
	seconds := func(name, description string) metric.Float64ObservableGauge { return real(name, "s", description) }
	in.rejected = counter("r4c.calls.rejected", "{call}",
		"Calls rejected at once because the limit was full; in a dry run, calls that would have been.")
	in.changes = counter("r4c.adaptivelimit.limit.changes", "{change}", "Windows that moved the adaptive limit.")
	in.windows = counter("r4c.adaptivelimit.windows", "{window}", "Windows that recomputed the adaptive limit.")
	in.limit = gauge("r4c.adaptivelimit.limit", "{call}", "How many calls may run at once.")
	in.exact = real("r4c.adaptivelimit.limit.exact", "{call}",
		"The adaptive limit as a real number: the limit, or below 1 the share of the time that one call may be in flight, paced.")
	in.concurrent = gauge("r4c.adaptivelimit.concurrent.calls", "{call}", "How many calls hold a slot now.")
	in.latency = seconds("r4c.adaptivelimit.window.latency",
		"Mean latency of the calls in the last window that recomputed the limit.")
	in.calls = counter("r4c.adaptivelimit.calls", "{call}",
		"Calls by outcome: success, drop, ignored, cancelled or rejected (in a dry run, none is rejected).")
	in.decisions = counter("r4c.adaptivelimit.decisions", "{window}",
		"Windows that recomputed the adaptive limit, by the reason and the direction of the move.")
	in.waiting = gauge("r4c.adaptivelimit.waiting.calls", "{call}", "How many callers wait for a slot now.")
	in.abandoned = counter("r4c.adaptivelimit.wait.abandoned", "{call}",
		"Callers that gave up waiting for a slot; also rejected calls.")
	in.baseline = seconds("r4c.adaptivelimit.baseline.latency",
		"The latency the algorithm compares a window's with: Gradient2's long-term latency, Vegas's no-load latency, LossDelay's baseline; 0 for AIMD.")
	in.maxConcurrent = gauge("r4c.adaptivelimit.window.max.concurrent.calls", "{call}",
		"The most calls in flight that a call of the last window saw.")
	in.dryRun = counter("r4c.adaptivelimit.dry_run.rejections", "{call}",
		"Calls that a limiter in a dry run admitted but would have rejected.")
	in.minLimit = gauge("r4c.adaptivelimit.limit.min", "{call}", "The lowest the adaptive limit may go: Config.MinLimit.")
	in.maxLimit = gauge("r4c.adaptivelimit.limit.max", "{call}", "The highest the adaptive limit may go: Config.MaxLimit.")
	return &in, errors.Join(errs...)
}

func (in *instruments) all() []metric.Observable {
	return []metric.Observable{in.rejected, in.changes, in.windows, in.limit, in.exact, in.concurrent, in.latency,
		in.calls, in.decisions, in.waiting, in.abandoned, in.baseline, in.maxConcurrent, in.dryRun,
		in.minLimit, in.maxLimit}
}

// observe reports one limiter's snapshot.
func (in *instruments) observe(o metric.Observer, s adaptivelimit.Snapshot) {
	name := attribute.String("name", s.Name)
	withName := metric.WithAttributeSet(attribute.NewSet(name))
	count := func(c metric.Int64ObservableCounter, n uint64, attrs ...attribute.KeyValue) {
		if len(attrs) == 0 {
			o.ObserveInt64(c, int64(n), withName)
			return
		}
		o.ObserveInt64(c, int64(n), metric.WithAttributeSet(attribute.NewSet(append(attrs, name)...)))
	}
	o.ObserveInt64(in.limit, int64(s.Limit), withName)
	o.ObserveFloat64(in.exact, s.ExactLimit, withName)
	o.ObserveInt64(in.concurrent, int64(s.InFlight), withName)
	o.ObserveFloat64(in.latency, s.WindowLatency.Seconds(), withName)
	count(in.rejected, s.Rejected, kind)
	count(in.changes, s.LimitChanges)
	count(in.windows, s.Windows)

	rejected, wouldReject := s.Rejected, uint64(0)
	if s.DryRun {
		rejected, wouldReject = 0, s.Rejected
	}
	for i, n := range [len(outcomes)]uint64{s.Successes, s.Drops, s.Ignored, s.Cancelled, rejected} {
		count(in.calls, n, outcomes[i])
	}
	for cause := range adaptivelimit.Causes() {
		kept, up, down := s.Decisions(cause)
		for i, n := range [len(directions)]uint64{kept, up, down} {
			if n != 0 {
				count(in.decisions, n, attribute.String("reason", cause.String()), directions[i])
			}
		}
	}
	o.ObserveInt64(in.waiting, int64(s.Waiting), withName)
	count(in.abandoned, s.WaitAbandoned)
	o.ObserveFloat64(in.baseline, s.LongLatency.Seconds(), withName)
	o.ObserveInt64(in.maxConcurrent, int64(s.Last.MaxInFlight), withName)
	count(in.dryRun, wouldReject)
	o.ObserveInt64(in.minLimit, int64(s.MinLimit), withName)
	o.ObserveInt64(in.maxLimit, int64(s.MaxLimit), withName)
}

// register observes the snapshots that source returns at each collection.
func register(mp metric.MeterProvider, source func() []adaptivelimit.Snapshot) (metric.Registration, error) {
	m := mp.Meter(ScopeName)
	in, err := newInstruments(m)
	if err != nil {
		return nil, err
	}
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for _, s := range source() {
			in.observe(o, s)
		}
		return nil
	}, in.all()...)
	if err != nil {
		return nil, err
	}
	return registerClasses(m, source, reg)
}
