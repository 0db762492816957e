package otellimit_test

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/otellimit"
)

func ExampleRegister() {
	limiter, _ := adaptivelimit.New(adaptivelimit.Config{Name: "search"})
	reader := sdkmetric.NewManualReader() // in production, a periodic reader and an exporter
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	if _, err := otellimit.Register(provider, limiter); err != nil {
		panic(err)
	}

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		fmt.Printf("%s (%s)\n", m.Name, m.Unit)
	}
	// Output:
	// r4c.calls.rejected ({call})
	// r4c.adaptivelimit.limit.changes ({change})
	// r4c.adaptivelimit.windows ({window})
	// r4c.adaptivelimit.limit ({call})
	// r4c.adaptivelimit.limit.exact ({call})
	// r4c.adaptivelimit.concurrent.calls ({call})
	// r4c.adaptivelimit.window.latency (s)
	// r4c.adaptivelimit.calls ({call})
	// r4c.adaptivelimit.waiting.calls ({call})
	// r4c.adaptivelimit.wait.abandoned ({call})
	// r4c.adaptivelimit.baseline.latency (s)
	// r4c.adaptivelimit.window.max.concurrent.calls ({call})
	// r4c.adaptivelimit.dry_run.rejections ({call})
	// r4c.adaptivelimit.limit.min ({call})
	// r4c.adaptivelimit.limit.max ({call})
}
