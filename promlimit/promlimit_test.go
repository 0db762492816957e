package promlimit

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/limittest"
)

const ordersMetrics = `
# HELP r4c_adaptivelimit_baseline_latency_seconds The latency the algorithm compares a window's with: Gradient2's long-term latency, Vegas's no-load latency, LossDelay's baseline; 0 for AIMD.
# TYPE r4c_adaptivelimit_baseline_latency_seconds gauge
r4c_adaptivelimit_baseline_latency_seconds{name="idle"} 0
r4c_adaptivelimit_baseline_latency_seconds{name="orders"} 1
# HELP r4c_adaptivelimit_calls_total Calls by outcome: success, drop, ignored, cancelled or rejected (in a dry run, none is rejected).
# TYPE r4c_adaptivelimit_calls_total counter
r4c_adaptivelimit_calls_total{name="idle",outcome="cancelled"} 0
r4c_adaptivelimit_calls_total{name="idle",outcome="drop"} 0
r4c_adaptivelimit_calls_total{name="idle",outcome="ignored"} 0
r4c_adaptivelimit_calls_total{name="idle",outcome="rejected"} 0
r4c_adaptivelimit_calls_total{name="idle",outcome="success"} 0
r4c_adaptivelimit_calls_total{name="orders",outcome="cancelled"} 0
r4c_adaptivelimit_calls_total{name="orders",outcome="drop"} 0
r4c_adaptivelimit_calls_total{name="orders",outcome="ignored"} 0
r4c_adaptivelimit_calls_total{name="orders",outcome="rejected"} 1
r4c_adaptivelimit_calls_total{name="orders",outcome="success"} 1
# HELP r4c_adaptivelimit_concurrent_calls How many calls hold a slot now.
# TYPE r4c_adaptivelimit_concurrent_calls gauge
r4c_adaptivelimit_concurrent_calls{name="idle"} 0
r4c_adaptivelimit_concurrent_calls{name="orders"} 1
# HELP r4c_adaptivelimit_decisions_total Windows that recomputed the adaptive limit, by the reason and the direction of the move.
# TYPE r4c_adaptivelimit_decisions_total counter
r4c_adaptivelimit_decisions_total{direction="up",name="orders",reason="growth"} 1
# HELP r4c_adaptivelimit_dry_run_rejections_total Calls that a limiter in a dry run admitted but would have rejected.
# TYPE r4c_adaptivelimit_dry_run_rejections_total counter
r4c_adaptivelimit_dry_run_rejections_total{name="idle"} 0
r4c_adaptivelimit_dry_run_rejections_total{name="orders"} 0
# HELP r4c_adaptivelimit_limit How many calls may run at once.
# TYPE r4c_adaptivelimit_limit gauge
r4c_adaptivelimit_limit{name="idle"} 20
r4c_adaptivelimit_limit{name="orders"} 6
# HELP r4c_adaptivelimit_limit_changes_total Windows that moved the adaptive limit.
# TYPE r4c_adaptivelimit_limit_changes_total counter
r4c_adaptivelimit_limit_changes_total{name="idle"} 0
r4c_adaptivelimit_limit_changes_total{name="orders"} 1
# HELP r4c_adaptivelimit_limit_exact The adaptive limit as a real number: the limit, or below 1 the share of the time that one call may be in flight, paced.
# TYPE r4c_adaptivelimit_limit_exact gauge
r4c_adaptivelimit_limit_exact{name="idle"} 20
r4c_adaptivelimit_limit_exact{name="orders"} 6
# HELP r4c_adaptivelimit_limit_max The highest the adaptive limit may go: Config.MaxLimit.
# TYPE r4c_adaptivelimit_limit_max gauge
r4c_adaptivelimit_limit_max{name="idle"} 200
r4c_adaptivelimit_limit_max{name="orders"} 200
# HELP r4c_adaptivelimit_limit_min The lowest the adaptive limit may go: Config.MinLimit.
# TYPE r4c_adaptivelimit_limit_min gauge
r4c_adaptivelimit_limit_min{name="idle"} 1
r4c_adaptivelimit_limit_min{name="orders"} 1
# HELP r4c_adaptivelimit_wait_abandoned_total Callers that gave up waiting for a slot; also rejected calls.
# TYPE r4c_adaptivelimit_wait_abandoned_total counter
r4c_adaptivelimit_wait_abandoned_total{name="idle"} 0
r4c_adaptivelimit_wait_abandoned_total{name="orders"} 0
# HELP r4c_adaptivelimit_waiting_calls How many callers wait for a slot now.
# TYPE r4c_adaptivelimit_waiting_calls gauge
r4c_adaptivelimit_waiting_calls{name="idle"} 0
r4c_adaptivelimit_waiting_calls{name="orders"} 0
# HELP r4c_adaptivelimit_window_latency_seconds Mean latency of the calls in the last window that recomputed the limit.
# TYPE r4c_adaptivelimit_window_latency_seconds gauge
r4c_adaptivelimit_window_latency_seconds{name="idle"} 0
r4c_adaptivelimit_window_latency_seconds{name="orders"} 1
# HELP r4c_adaptivelimit_window_max_concurrent_calls The most calls in flight that a call of the last window saw.
# TYPE r4c_adaptivelimit_window_max_concurrent_calls gauge
r4c_adaptivelimit_window_max_concurrent_calls{name="idle"} 0
r4c_adaptivelimit_window_max_concurrent_calls{name="orders"} 1
# HELP r4c_adaptivelimit_windows_total Windows that recomputed the adaptive limit.
# TYPE r4c_adaptivelimit_windows_total counter
r4c_adaptivelimit_windows_total{name="idle"} 0
r4c_adaptivelimit_windows_total{name="orders"} 1
# HELP r4c_calls_rejected_total Calls rejected at once because the limit was full; in a dry run, calls that would have been.
# TYPE r4c_calls_rejected_total counter
r4c_calls_rejected_total{kind="adaptivelimit",name="idle"} 0
r4c_calls_rejected_total{kind="adaptivelimit",name="orders"} 1
`

func newIdle(t *testing.T) *adaptivelimit.Limiter {
	t.Helper()
	l, err := adaptivelimit.New(adaptivelimit.Config{Name: "idle"})
	require.NoError(t, err)
	return l
}

// A real registry, scraped after known traffic: every series, label, HELP text and value.
func TestCollector(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(NewCollector(limittest.Orders(t), newIdle(t))))
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(ordersMetrics)))
}

// The collector reads the limiters when scraped, not when created.
func TestCollectorReadsAtScrape(t *testing.T) {
	l := newIdle(t)
	c := NewCollector(l)
	require.Equal(t, 19, testutil.CollectAndCount(c), "a series each, calls by five outcomes, no decisions yet")
	p, err := l.Acquire()
	require.NoError(t, err)
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(`
# HELP r4c_adaptivelimit_concurrent_calls How many calls hold a slot now.
# TYPE r4c_adaptivelimit_concurrent_calls gauge
r4c_adaptivelimit_concurrent_calls{name="idle"} 1
`), "r4c_adaptivelimit_concurrent_calls"))
	p.Done(nil)
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(`
# HELP r4c_adaptivelimit_concurrent_calls How many calls hold a slot now.
# TYPE r4c_adaptivelimit_concurrent_calls gauge
r4c_adaptivelimit_concurrent_calls{name="idle"} 0
`), "r4c_adaptivelimit_concurrent_calls"))
}

func TestCollectorLint(t *testing.T) {
	problems, err := testutil.CollectAndLint(NewCollector(limittest.Orders(t)))
	require.NoError(t, err)
	require.Empty(t, problems)
}

// A registry's collector collects the limiters the registry creates after it.
func TestRegistryCollector(t *testing.T) {
	r, err := adaptivelimit.NewRegistry(adaptivelimit.RegistryConfig{Clock: adaptivelimit.NewManualClock()})
	require.NoError(t, err)
	c := NewRegistryCollector(r)
	require.Zero(t, testutil.CollectAndCount(c))

	_, err = r.Limiter("search", adaptivelimit.Site{Attrs: adaptivelimit.Config{InitialLimit: 7}})
	require.NoError(t, err)
	orders, err := r.Limiter("orders", adaptivelimit.Site{})
	require.NoError(t, err)
	_, err = orders.Acquire()
	require.NoError(t, err)
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(`
# HELP r4c_adaptivelimit_concurrent_calls How many calls hold a slot now.
# TYPE r4c_adaptivelimit_concurrent_calls gauge
r4c_adaptivelimit_concurrent_calls{name="orders"} 1
r4c_adaptivelimit_concurrent_calls{name="search"} 0
# HELP r4c_adaptivelimit_limit How many calls may run at once.
# TYPE r4c_adaptivelimit_limit gauge
r4c_adaptivelimit_limit{name="orders"} 20
r4c_adaptivelimit_limit{name="search"} 7
`), "r4c_adaptivelimit_concurrent_calls", "r4c_adaptivelimit_limit"))
}

// A dry run rejects nothing: the calls it would have rejected are their own series, and
// still in r4c_calls_rejected_total as before.
func TestCollectorDryRun(t *testing.T) {
	l, err := adaptivelimit.New(adaptivelimit.Config{Name: "trial", DryRun: true, InitialLimit: 1, MinLimit: 1, MaxLimit: 1})
	require.NoError(t, err)
	p, err := l.Acquire()
	require.NoError(t, err)
	q, err := l.Acquire()
	require.NoError(t, err, "admitted above the limit")
	p.Cancel()
	q.Done(errors.New("404"))
	require.NoError(t, testutil.CollectAndCompare(NewCollector(l), strings.NewReader(`
# HELP r4c_adaptivelimit_calls_total Calls by outcome: success, drop, ignored, cancelled or rejected (in a dry run, none is rejected).
# TYPE r4c_adaptivelimit_calls_total counter
r4c_adaptivelimit_calls_total{name="trial",outcome="cancelled"} 1
r4c_adaptivelimit_calls_total{name="trial",outcome="drop"} 0
r4c_adaptivelimit_calls_total{name="trial",outcome="ignored"} 1
r4c_adaptivelimit_calls_total{name="trial",outcome="rejected"} 0
r4c_adaptivelimit_calls_total{name="trial",outcome="success"} 0
# HELP r4c_adaptivelimit_dry_run_rejections_total Calls that a limiter in a dry run admitted but would have rejected.
# TYPE r4c_adaptivelimit_dry_run_rejections_total counter
r4c_adaptivelimit_dry_run_rejections_total{name="trial"} 1
# HELP r4c_calls_rejected_total Calls rejected at once because the limit was full; in a dry run, calls that would have been.
# TYPE r4c_calls_rejected_total counter
r4c_calls_rejected_total{kind="adaptivelimit",name="trial"} 1
`), "r4c_adaptivelimit_calls_total", "r4c_adaptivelimit_dry_run_rejections_total", "r4c_calls_rejected_total"))
}

// Two limiters with the same name, the default one say, are refused when the collector is
// registered, with an error that names the name, not when Prometheus scrapes.
func TestCollectorRefusesDuplicateNames(t *testing.T) {
	a, err := adaptivelimit.New(adaptivelimit.Config{})
	require.NoError(t, err)
	b, err := adaptivelimit.New(adaptivelimit.Config{})
	require.NoError(t, err)
	c, err := adaptivelimit.New(adaptivelimit.Config{Name: "orders"})
	require.NoError(t, err)

	reg := prometheus.NewPedanticRegistry()
	err = reg.Register(NewCollector(a, c, b))
	require.ErrorContains(t, err, `two limiters are named "adaptivelimit"`)
	require.NoError(t, reg.Register(NewCollector(a, c)))
	_, err = reg.Gather()
	require.NoError(t, err)
}
