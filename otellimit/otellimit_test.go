package otellimit

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
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
		gauge("r4c.adaptivelimit.concurrent.calls", "{call}", "How many calls hold a slot now.",
			point[int64](1, orders), point[int64](0, idleName)),
		gauge("r4c.adaptivelimit.window.latency", "s", "Mean latency of the calls in the last window that recomputed the limit.",
			point(1.0, orders), point(0.0, idleName)),
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
