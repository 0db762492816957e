package otellimit

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/resilience4cata/adaptivelimit/limittest"
)

// A limiter with classes: an observation per class, after known traffic.
func TestClassInstruments(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	l := limittest.Classed(t, "api", 10)
	reg, err := Register(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), l)
	require.NoError(t, err)
	limittest.ClassTraffic(t, l)
	p, err := l.AcquireClass("Critical") // no class of l: counted, and the lowest class's, which is full
	require.Error(t, err)
	p.Cancel()

	name := attribute.String("name", "api")
	critical, batch := attribute.String("class", "critical"), attribute.String("class", "batch")
	got := map[string]metricdata.Metrics{}
	for _, m := range collect(t, reader) {
		got[m.Name] = m
	}
	for _, want := range []metricdata.Metrics{
		sum("r4c.adaptivelimit.class.rejected", "{call}", "Calls of a priority class rejected at once because no slot it may use was free; in a dry run, calls that would have been.",
			point[int64](0, name, critical), point[int64](2, name, batch)),
		sum("r4c.adaptivelimit.unknown.class", "{call}", "Calls that named a priority class the limiter lacks, which took its lowest class.",
			point[int64](1, name)),
		gauge("r4c.adaptivelimit.class.concurrent.calls", "{call}", "How many calls of a priority class hold a slot now.",
			point[int64](1, name, critical), point[int64](6, name, batch)),
		gauge("r4c.adaptivelimit.class.reserved.calls", "{call}", "How many slots of the limit a priority class reserves now.",
			point[int64](5, name, critical), point[int64](0, name, batch)),
	} {
		metricdatatest.AssertEqual(t, want, got[want.Name], metricdatatest.IgnoreTimestamp())
	}
	require.NoError(t, reg.Unregister())
	require.Empty(t, collect(t, reader), "nothing is observed once unregistered")
}
