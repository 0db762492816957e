package promlimit

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/limittest"
)

const ordersMetrics = `
# HELP r4c_adaptivelimit_concurrent_calls How many calls hold a slot now.
# TYPE r4c_adaptivelimit_concurrent_calls gauge
r4c_adaptivelimit_concurrent_calls{name="idle"} 0
r4c_adaptivelimit_concurrent_calls{name="orders"} 1
# HELP r4c_adaptivelimit_limit How many calls may run at once.
# TYPE r4c_adaptivelimit_limit gauge
r4c_adaptivelimit_limit{name="idle"} 20
r4c_adaptivelimit_limit{name="orders"} 6
# HELP r4c_adaptivelimit_limit_changes_total Windows that moved the adaptive limit.
# TYPE r4c_adaptivelimit_limit_changes_total counter
r4c_adaptivelimit_limit_changes_total{name="idle"} 0
r4c_adaptivelimit_limit_changes_total{name="orders"} 1
# HELP r4c_adaptivelimit_window_latency_seconds Mean latency of the calls in the last window that recomputed the limit.
# TYPE r4c_adaptivelimit_window_latency_seconds gauge
r4c_adaptivelimit_window_latency_seconds{name="idle"} 0
r4c_adaptivelimit_window_latency_seconds{name="orders"} 1
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
	require.Equal(t, 6, testutil.CollectAndCount(c))
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
