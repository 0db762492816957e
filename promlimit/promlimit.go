// Package promlimit exports adaptive limits to Prometheus.
//
// Its collector reads each limiter's Snapshot when Prometheus scrapes, and adds nothing to
// the calls. The series, each labelled with the limiter's name, are:
//
//	r4c_calls_rejected_total{kind="adaptivelimit",name}   counter: calls rejected
//	r4c_adaptivelimit_limit_changes_total{name}           counter: windows that moved the limit
//	r4c_adaptivelimit_windows_total{name}                 counter: windows that recomputed the limit
//	r4c_adaptivelimit_limit{name}                         gauge: calls that may run at once
//	r4c_adaptivelimit_concurrent_calls{name}              gauge: calls that hold a slot
//	r4c_adaptivelimit_window_latency_seconds{name}        gauge: the last window's mean latency
//
// A limiter with priority classes has per-class series too (see class.go's list), labelled
// with the class's name in "class".
package promlimit

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/resilience4cata/adaptivelimit"
)

// NewCollector returns a collector of the limiters' metrics. Register it once; two limiters
// with the same name make the registry's Gather fail.
func NewCollector(limiters ...*adaptivelimit.Limiter) prometheus.Collector {
	limiters = slices.Clone(limiters)
	return newCollector(func() []adaptivelimit.Snapshot { return adaptivelimit.Snapshots(limiters...) })
}

// NewRegistryCollector returns a collector of the metrics of every limiter of r, those that
// r creates after the collector included.
func NewRegistryCollector(r *adaptivelimit.Registry) prometheus.Collector {
	return newCollector(r.Snapshot)
}

var (
	rejectedDesc = prometheus.NewDesc("r4c_calls_rejected_total",
		"Calls rejected at once because the limit was full; in a dry run, calls that would have been.",
		[]string{"name"}, prometheus.Labels{"kind": "adaptivelimit"})
	changesDesc = prometheus.NewDesc("r4c_adaptivelimit_limit_changes_total",
		"Windows that moved the adaptive limit.", []string{"name"}, nil)
	windowsDesc = prometheus.NewDesc("r4c_adaptivelimit_windows_total",
		"Windows that recomputed the adaptive limit.", []string{"name"}, nil)
	limitDesc = prometheus.NewDesc("r4c_adaptivelimit_limit",
		"How many calls may run at once.", []string{"name"}, nil)
	concurrentDesc = prometheus.NewDesc("r4c_adaptivelimit_concurrent_calls",
		"How many calls hold a slot now.", []string{"name"}, nil)
	latencyDesc = prometheus.NewDesc("r4c_adaptivelimit_window_latency_seconds",
		"Mean latency of the calls in the last window that recomputed the limit.", []string{"name"}, nil)
)

// collector reports the snapshots that its source returns at each scrape.
type collector struct {
	snapshots func() []adaptivelimit.Snapshot
}

func newCollector(snapshots func() []adaptivelimit.Snapshot) *collector {
	return &collector{snapshots: snapshots}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{rejectedDesc, changesDesc, windowsDesc, limitDesc, concurrentDesc, latencyDesc} {
		ch <- d
	}
	describeClasses(ch)
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.snapshots() {
		ch <- prometheus.MustNewConstMetric(rejectedDesc, prometheus.CounterValue, float64(s.Rejected), s.Name)
		ch <- prometheus.MustNewConstMetric(changesDesc, prometheus.CounterValue, float64(s.LimitChanges), s.Name)
		ch <- prometheus.MustNewConstMetric(windowsDesc, prometheus.CounterValue, float64(s.Windows), s.Name)
		ch <- prometheus.MustNewConstMetric(limitDesc, prometheus.GaugeValue, float64(s.Limit), s.Name)
		ch <- prometheus.MustNewConstMetric(concurrentDesc, prometheus.GaugeValue, float64(s.InFlight), s.Name)
		ch <- prometheus.MustNewConstMetric(latencyDesc, prometheus.GaugeValue, s.WindowLatency.Seconds(), s.Name)
		collectClasses(ch, &s)
	}
}
