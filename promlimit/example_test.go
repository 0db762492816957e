package promlimit_test

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/promlimit"
)

func ExampleNewCollector() {
	limiter, _ := adaptivelimit.New(adaptivelimit.Config{Name: "search"})
	reg := prometheus.NewRegistry()
	reg.MustRegister(promlimit.NewCollector(limiter))

	families, _ := reg.Gather() // what a scrape of promhttp.HandlerFor(reg, ...) reads
	for _, f := range families {
		for _, m := range f.GetMetric() {
			value := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			fmt.Println(f.GetName(), value)
		}
	}
	// Output:
	// r4c_adaptivelimit_concurrent_calls 0
	// r4c_adaptivelimit_limit 20
	// r4c_adaptivelimit_limit_changes_total 0
	// r4c_adaptivelimit_window_latency_seconds 0
	// r4c_adaptivelimit_windows_total 0
	// r4c_calls_rejected_total 0
}
