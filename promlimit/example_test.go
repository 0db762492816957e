package promlimit_test

import (
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/promlimit"
)

func ExampleNewCollector() {
	limiter, _ := adaptivelimit.New(adaptivelimit.Config{Name: "search"})
	reg := prometheus.NewRegistry()
	reg.MustRegister(promlimit.NewCollector(limiter))

	p, _ := limiter.Acquire()
	p.Done(nil)
	p, _ = limiter.Acquire()
	p.Cancel()

	families, _ := reg.Gather() // what a scrape of promhttp.HandlerFor(reg, ...) reads
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				if l.GetName() != "name" {
					labels = append(labels, l.GetName()+"="+l.GetValue())
				}
			}
			series := f.GetName()
			if len(labels) > 0 {
				series += "{" + strings.Join(labels, ",") + "}"
			}
			fmt.Println(series, m.GetGauge().GetValue()+m.GetCounter().GetValue())
		}
	}
	// Output:
	// r4c_adaptivelimit_baseline_latency_seconds 0
	// r4c_adaptivelimit_calls_total{outcome=cancelled} 1
	// r4c_adaptivelimit_calls_total{outcome=drop} 0
	// r4c_adaptivelimit_calls_total{outcome=ignored} 0
	// r4c_adaptivelimit_calls_total{outcome=rejected} 0
	// r4c_adaptivelimit_calls_total{outcome=success} 1
	// r4c_adaptivelimit_concurrent_calls 0
	// r4c_adaptivelimit_dry_run_rejections_total 0
	// r4c_adaptivelimit_limit 20
	// r4c_adaptivelimit_limit_changes_total 0
	// r4c_adaptivelimit_limit_exact 20
	// r4c_adaptivelimit_limit_max 200
	// r4c_adaptivelimit_limit_min 1
	// r4c_adaptivelimit_wait_abandoned_total 0
	// r4c_adaptivelimit_waiting_calls 0
	// r4c_adaptivelimit_window_latency_seconds 0
	// r4c_adaptivelimit_window_max_concurrent_calls 0
	// r4c_adaptivelimit_windows_total 0
	// r4c_calls_rejected_total{kind=adaptivelimit} 0
}
