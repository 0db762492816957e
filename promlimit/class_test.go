package promlimit

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/resilience4cata/adaptivelimit"
)

// A limiter with classes: a series per class, after known traffic.
func TestClassSeries(t *testing.T) {
	l, err := adaptivelimit.New(adaptivelimit.Config{Name: "api", InitialLimit: 10, MinLimit: 10, MaxLimit: 10,
		Classes: []adaptivelimit.Class{{Name: "critical", Reserve: 0.3}, {Name: "sheddable"}}})
	require.NoError(t, err)
	p, err := l.AcquireClass("critical")
	require.NoError(t, err)
	defer p.Done(nil)
	var held []adaptivelimit.Permit
	for {
		q, err := l.Acquire()
		if err != nil {
			break
		}
		held = append(held, q)
	}
	defer func() {
		for i := range held {
			held[i].Done(nil)
		}
	}()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(NewCollector(l, newIdle(t))))
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP r4c_adaptivelimit_class_concurrent_calls How many calls of a priority class hold a slot now.
# TYPE r4c_adaptivelimit_class_concurrent_calls gauge
r4c_adaptivelimit_class_concurrent_calls{class="critical",name="api"} 1
r4c_adaptivelimit_class_concurrent_calls{class="sheddable",name="api"} 7
# HELP r4c_adaptivelimit_class_rejected_total Calls of a priority class rejected at once because no slot it may use was free; in a dry run, calls that would have been.
# TYPE r4c_adaptivelimit_class_rejected_total counter
r4c_adaptivelimit_class_rejected_total{class="critical",name="api"} 0
r4c_adaptivelimit_class_rejected_total{class="sheddable",name="api"} 1
# HELP r4c_adaptivelimit_class_reserved_calls How many slots of the limit a priority class reserves now.
# TYPE r4c_adaptivelimit_class_reserved_calls gauge
r4c_adaptivelimit_class_reserved_calls{class="critical",name="api"} 3
r4c_adaptivelimit_class_reserved_calls{class="sheddable",name="api"} 0
`), "r4c_adaptivelimit_class_concurrent_calls", "r4c_adaptivelimit_class_rejected_total", "r4c_adaptivelimit_class_reserved_calls"))
	require.Equal(t, 6+6+3*2, testutil.CollectAndCount(NewCollector(l, newIdle(t))))
}
