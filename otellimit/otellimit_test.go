package otellimit

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/limittest"
)

func collect(t *testing.T, reader *sdkmetric.ManualReader) []metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	if len(rm.ScopeMetrics) == 0 {
		return nil
	}
	require.Len(t, rm.ScopeMetrics, 1)
	require.Equal(t, ScopeName, rm.ScopeMetrics[0].Scope.Name)
	return rm.ScopeMetrics[0].Metrics
}

func sum(name, unit, description string, points ...metricdata.DataPoint[int64]) metricdata.Metrics {
	return metricdata.Metrics{Name: name, Unit: unit, Description: description, Data: metricdata.Sum[int64]{
		DataPoints: points, Temporality: metricdata.CumulativeTemporality, IsMonotonic: true,
	}}
}

func gauge[N int64 | float64](name, unit, description string, points ...metricdata.DataPoint[N]) metricdata.Metrics {
	return metricdata.Metrics{Name: name, Unit: unit, Description: description, Data: metricdata.Gauge[N]{DataPoints: points}}
}

func point[N int64 | float64](value N, attrs ...attribute.KeyValue) metricdata.DataPoint[N] {
	return metricdata.DataPoint[N]{Attributes: attribute.NewSet(attrs...), Value: value}
}

// outcomePoints are a limiter's calls by outcome: success, drop, ignored, cancelled, rejected.
func outcomePoints(name attribute.KeyValue, counts ...int64) []metricdata.DataPoint[int64] {
	var points []metricdata.DataPoint[int64]
	for i, outcome := range []string{"success", "drop", "ignored", "cancelled", "rejected"} {
		points = append(points, point(counts[i], name, attribute.String("outcome", outcome)))
	}
	return points
}

// A ManualReader, read after known traffic: every instrument, unit, attribute and value.
func TestRegister(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	idle, err := adaptivelimit.New(adaptivelimit.Config{Name: "idle"})
	require.NoError(t, err)
	reg, err := Register(mp, limittest.Orders(t), idle)
	require.NoError(t, err)

	orders, idleName := attribute.String("name", "orders"), attribute.String("name", "idle")
	want := []metricdata.Metrics{
		sum("r4c.calls.rejected", "{call}", "Calls rejected at once because the limit was full; in a dry run, calls that would have been.",
			point[int64](1, kind, orders), point[int64](0, kind, idleName)),
		sum("r4c.adaptivelimit.limit.changes", "{change}", "Windows that moved the adaptive limit.",
			point[int64](1, orders), point[int64](0, idleName)),
		sum("r4c.adaptivelimit.windows", "{window}", "Windows that recomputed the adaptive limit.",
			point[int64](1, orders), point[int64](0, idleName)),
		gauge("r4c.adaptivelimit.limit", "{call}", "How many calls may run at once.",
			point[int64](6, orders), point[int64](20, idleName)),
		gauge("r4c.adaptivelimit.limit.exact", "{call}", "The adaptive limit as a real number: the limit, or below 1 the share of the time that one call may be in flight, paced.",
			point(6.0, orders), point(20.0, idleName)),
		gauge("r4c.adaptivelimit.concurrent.calls", "{call}", "How many calls hold a slot now.",
			point[int64](1, orders), point[int64](0, idleName)),
		gauge("r4c.adaptivelimit.window.latency", "s", "Mean latency of the calls in the last window that recomputed the limit.",
			point(1.0, orders), point(0.0, idleName)),
		sum("r4c.adaptivelimit.calls", "{call}", "Calls by outcome: success, drop, ignored, cancelled or rejected (in a dry run, none is rejected).",
			slices.Concat(outcomePoints(orders, 1, 0, 0, 0, 1), outcomePoints(idleName, 0, 0, 0, 0, 0))...),
		sum("r4c.adaptivelimit.decisions", "{window}", "Windows that recomputed the adaptive limit, by the reason and the direction of the move.",
			point[int64](1, orders, attribute.String("reason", "growth"), attribute.String("direction", "up"))),
		gauge("r4c.adaptivelimit.waiting.calls", "{call}", "How many callers wait for a slot now.",
			point[int64](0, orders), point[int64](0, idleName)),
		sum("r4c.adaptivelimit.wait.abandoned", "{call}", "Callers that gave up waiting for a slot; also rejected calls.",
			point[int64](0, orders), point[int64](0, idleName)),
		gauge("r4c.adaptivelimit.baseline.latency", "s", "The latency the algorithm compares a window's with: Gradient2's long-term latency, Vegas's no-load latency, LossDelay's baseline; 0 for AIMD.",
			point(1.0, orders), point(0.0, idleName)),
		gauge("r4c.adaptivelimit.window.max.concurrent.calls", "{call}", "The most calls in flight that a call of the last window saw.",
			point[int64](1, orders), point[int64](0, idleName)),
		sum("r4c.adaptivelimit.dry_run.rejections", "{call}", "Calls that a limiter in a dry run admitted but would have rejected.",
			point[int64](0, orders), point[int64](0, idleName)),
		gauge("r4c.adaptivelimit.limit.min", "{call}", "The lowest the adaptive limit may go: Config.MinLimit.",
			point[int64](1, orders), point[int64](1, idleName)),
		gauge("r4c.adaptivelimit.limit.max", "{call}", "The highest the adaptive limit may go: Config.MaxLimit.",
			point[int64](200, orders), point[int64](200, idleName)),
	}

	got := collect(t, reader)
	require.Len(t, got, len(want))
	for i := range want {
		metricdatatest.AssertEqual(t, want[i], got[i], metricdatatest.IgnoreTimestamp())
	}

	require.NoError(t, reg.Unregister())
	require.Empty(t, collect(t, reader), "nothing is observed once unregistered")
}

// The instruments read the limiters when collected, not when registered.
func TestRegisterReadsAtCollection(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	l, err := adaptivelimit.New(adaptivelimit.Config{Name: "idle"})
	require.NoError(t, err)
	_, err = Register(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), l)
	require.NoError(t, err)
	p, err := l.Acquire()
	require.NoError(t, err)
	inFlight := func() int64 {
		for _, m := range collect(t, reader) {
			if m.Name == "r4c.adaptivelimit.concurrent.calls" {
				return m.Data.(metricdata.Gauge[int64]).DataPoints[0].Value
			}
		}
		t.Fatal("no r4c.adaptivelimit.concurrent.calls")
		return 0
	}
	require.Equal(t, int64(1), inFlight())
	p.Done(nil)
	require.Equal(t, int64(0), inFlight())
}

// A registry's instruments observe the limiters the registry creates after them.
func TestRegisterRegistry(t *testing.T) {
	r, err := adaptivelimit.NewRegistry(adaptivelimit.RegistryConfig{Clock: adaptivelimit.NewManualClock()})
	require.NoError(t, err)
	reader := sdkmetric.NewManualReader()
	_, err = RegisterRegistry(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), r)
	require.NoError(t, err)
	require.Empty(t, collect(t, reader))

	_, err = r.Limiter("search", adaptivelimit.Site{Attrs: adaptivelimit.Config{InitialLimit: 7}})
	require.NoError(t, err)
	_, err = r.Limiter("orders", adaptivelimit.Site{})
	require.NoError(t, err)
	for _, m := range collect(t, reader) {
		if m.Name == "r4c.adaptivelimit.limit" {
			metricdatatest.AssertEqual(t, gauge("r4c.adaptivelimit.limit", "{call}", "How many calls may run at once.",
				point[int64](20, attribute.String("name", "orders")), point[int64](7, attribute.String("name", "search"))),
				m, metricdatatest.IgnoreTimestamp())
			return
		}
	}
	t.Fatal("no r4c.adaptivelimit.limit")
}

// A dry run rejects nothing: the calls it would have rejected are their own instrument, and
// still in r4c.calls.rejected as before.
func TestRegisterDryRun(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	l, err := adaptivelimit.New(adaptivelimit.Config{Name: "trial", DryRun: true, InitialLimit: 1, MinLimit: 1, MaxLimit: 1})
	require.NoError(t, err)
	_, err = Register(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), l)
	require.NoError(t, err)
	p, err := l.Acquire()
	require.NoError(t, err)
	q, err := l.Acquire()
	require.NoError(t, err, "admitted above the limit")
	p.Finish(adaptivelimit.Ignore)
	q.Cancel()
	name := attribute.String("name", "trial")
	got := map[string]metricdata.Metrics{}
	for _, m := range collect(t, reader) {
		got[m.Name] = m
	}
	for _, want := range []metricdata.Metrics{
		sum("r4c.calls.rejected", "{call}", "Calls rejected at once because the limit was full; in a dry run, calls that would have been.",
			point[int64](1, kind, name)),
		sum("r4c.adaptivelimit.calls", "{call}", "Calls by outcome: success, drop, ignored, cancelled or rejected (in a dry run, none is rejected).",
			outcomePoints(name, 0, 0, 1, 1, 0)...),
		sum("r4c.adaptivelimit.dry_run.rejections", "{call}", "Calls that a limiter in a dry run admitted but would have rejected.",
			point[int64](1, name)),
	} {
		metricdatatest.AssertEqual(t, want, got[want.Name], metricdatatest.IgnoreTimestamp())
	}
}

// Two limiters with the same name are refused at registration, with an error that names the
// name: in one Register, or in a second Register in the same meter provider, until the first
// is unregistered.
func TestRegisterRefusesDuplicateNames(t *testing.T) {
	a, err := adaptivelimit.New(adaptivelimit.Config{})
	require.NoError(t, err)
	b, err := adaptivelimit.New(adaptivelimit.Config{})
	require.NoError(t, err)
	c, err := adaptivelimit.New(adaptivelimit.Config{Name: "orders"})
	require.NoError(t, err)
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))

	_, err = Register(mp, a, c, b)
	require.ErrorContains(t, err, `two limiters are named "adaptivelimit"`)
	first, err := Register(mp, a)
	require.NoError(t, err)
	_, err = Register(mp, c, b)
	require.ErrorContains(t, err, `two limiters are named "adaptivelimit"`)
	second, err := Register(mp, c)
	require.NoError(t, err, "the refused registration claimed nothing")
	require.NoError(t, first.Unregister())
	third, err := Register(mp, b)
	require.NoError(t, err, "unregistering gives the name back")
	other := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	fourth, err := Register(other, a)
	require.NoError(t, err, "another meter provider has names of its own")
	for _, r := range []metric.Registration{second, third, fourth} {
		require.NoError(t, r.Unregister())
	}
}
