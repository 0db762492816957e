// Package promlimit exports adaptive limits to Prometheus.
//
// Its collector reads each limiter's Snapshot when Prometheus scrapes, and adds nothing to
// the calls. Every series carries the limiter's name in the label "name"; the series, their
// labels and what each counts are in one table, docs/metrics.md in the repository
// (https://github.com/resilience4cata/adaptivelimit/blob/main/docs/metrics.md), which
// otellimit's instruments follow too. dashboard.json beside this package is a Grafana
// dashboard of them, and alerts.yaml Prometheus alerting rules, with their unit tests in
// alerts_test.yaml.
package promlimit

import (
	"fmt"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/integration"
)

// NewCollector returns a collector of the limiters' metrics. Register it once. Two limiters
// with the same name would report the same series, so registering a collector of them
// fails, with an error that names the name.
func NewCollector(limiters ...*adaptivelimit.Limiter) prometheus.Collector {
	limiters = slices.Clone(limiters)
	c := newCollector(func() []adaptivelimit.Snapshot { return integration.Snapshots(limiters...) })
	c.err = duplicate(limiters)
	return c
}

// NewRegistryCollector returns a collector of the metrics of every limiter of r, those that
// r creates after the collector included. A registry's limiters have names of their own.
func NewRegistryCollector(r *adaptivelimit.Registry) prometheus.Collector {
	return newCollector(r.Snapshot)
}

// duplicate returns the error of the first name that two of limiters have, or nil.
func duplicate(limiters []*adaptivelimit.Limiter) error {
	seen := make(map[string]bool, len(limiters))
	for _, s := range integration.Snapshots(limiters...) {
		if seen[s.Name] {
			return fmt.Errorf("promlimit: two limiters are named %q: their series would be the same (set Config.Name)", s.Name)
		}
		seen[s.Name] = true
	}
	return nil
}

// directions are the values of the decisions' label "direction", in the order of
// Snapshot.Decisions' results.
var directions = [...]string{"kept", "up", "down"}

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
	exactDesc = prometheus.NewDesc("r4c_adaptivelimit_limit_exact",
		"The adaptive limit as a real number: the limit, or below 1 the share of the time that one call may be in flight, paced.",
		[]string{"name"}, nil)
	concurrentDesc = prometheus.NewDesc("r4c_adaptivelimit_concurrent_calls",
		"How many calls hold a slot now.", []string{"name"}, nil)
	latencyDesc = prometheus.NewDesc("r4c_adaptivelimit_window_latency_seconds",
		"Mean latency of the calls in the last window that recomputed the limit.", []string{"name"}, nil)

	callsDesc = prometheus.NewDesc("r4c_adaptivelimit_calls_total",
		"Calls by outcome: success, drop, ignored, cancelled or rejected (in a dry run, none is rejected).",
		[]string{"name", "outcome"}, nil)
	decisionsDesc = prometheus.NewDesc("r4c_adaptivelimit_decisions_total",
		"Windows that recomputed the adaptive limit, by the reason and the direction of the move.",
		[]string{"name", "reason", "direction"}, nil)
	waitingDesc = prometheus.NewDesc("r4c_adaptivelimit_waiting_calls",
		"How many callers wait for a slot now.", []string{"name"}, nil)
	abandonedDesc = prometheus.NewDesc("r4c_adaptivelimit_wait_abandoned_total",
		"Callers that gave up waiting for a slot; also rejected calls.", []string{"name"}, nil)
	baselineDesc = prometheus.NewDesc("r4c_adaptivelimit_baseline_latency_seconds",
		"The latency the algorithm compares a window's with: Gradient2's long-term latency, Vegas's no-load latency, LossDelay's baseline; 0 for AIMD.",
		[]string{"name"}, nil)
	maxConcurrentDesc = prometheus.NewDesc("r4c_adaptivelimit_window_max_concurrent_calls",
		"The most calls in flight that a call of the last window saw.", []string{"name"}, nil)
	dryRunDesc = prometheus.NewDesc("r4c_adaptivelimit_dry_run_rejections_total",
		"Calls that a limiter in a dry run admitted but would have rejected.", []string{"name"}, nil)
	minLimitDesc = prometheus.NewDesc("r4c_adaptivelimit_limit_min",
		"The lowest the adaptive limit may go: Config.MinLimit.", []string{"name"}, nil)
	maxLimitDesc = prometheus.NewDesc("r4c_adaptivelimit_limit_max",
		"The highest the adaptive limit may go: Config.MaxLimit.", []string{"name"}, nil)

	descs = []*prometheus.Desc{rejectedDesc, changesDesc, windowsDesc, limitDesc, exactDesc, concurrentDesc, latencyDesc,
		callsDesc, decisionsDesc, waitingDesc, abandonedDesc, baselineDesc, maxConcurrentDesc, dryRunDesc,
		minLimitDesc, maxLimitDesc}
)

// collector reports the snapshots that its source returns at each scrape.
type collector struct {
	snapshots func() []adaptivelimit.Snapshot
	err       error // why registering the collector fails
}

func newCollector(snapshots func() []adaptivelimit.Snapshot) *collector {
	return &collector{snapshots: snapshots}
}

// Describe describes the series, or, where the collector cannot be registered, sends the
// invalid Desc that makes the registry's Register fail with its error.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	if c.err != nil {
		ch <- prometheus.NewInvalidDesc(c.err)
		return
	}
	for _, d := range descs {
		ch <- d
	}
	describeClasses(ch)
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, name string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, name)
	}
	for _, s := range c.snapshots() {
		counter(rejectedDesc, s.Rejected, s.Name)
		counter(changesDesc, s.LimitChanges, s.Name)
		counter(windowsDesc, s.Windows, s.Name)
		gauge(limitDesc, float64(s.Limit), s.Name)
		gauge(exactDesc, s.ExactLimit, s.Name)
		gauge(concurrentDesc, float64(s.InFlight), s.Name)
		gauge(latencyDesc, s.WindowLatency.Seconds(), s.Name)

		rejected, wouldReject := s.Rejected, uint64(0)
		if s.DryRun {
			rejected, wouldReject = 0, s.Rejected
		}
		counter(callsDesc, s.Successes, s.Name, "success")
		counter(callsDesc, s.Drops, s.Name, "drop")
		counter(callsDesc, s.Ignored, s.Name, "ignored")
		counter(callsDesc, s.Cancelled, s.Name, "cancelled")
		counter(callsDesc, rejected, s.Name, "rejected")
		for cause := range adaptivelimit.Causes() {
			kept, up, down := s.Decisions(cause)
			for i, n := range [len(directions)]uint64{kept, up, down} {
				if n != 0 {
					counter(decisionsDesc, n, s.Name, cause.String(), directions[i])
				}
			}
		}
		gauge(waitingDesc, float64(s.Waiting), s.Name)
		counter(abandonedDesc, s.WaitAbandoned, s.Name)
		gauge(baselineDesc, s.LongLatency.Seconds(), s.Name)
		gauge(maxConcurrentDesc, float64(s.Last.MaxInFlight), s.Name)
		counter(dryRunDesc, wouldReject, s.Name)
		gauge(minLimitDesc, float64(s.MinLimit), s.Name)
		gauge(maxLimitDesc, float64(s.MaxLimit), s.Name)
		collectClasses(ch, &s)
	}
}
