package promlimit

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/resilience4cata/adaptivelimit/limittest"
)

// A limiter with classes: a series per class, after known traffic.
func TestClassSeries(t *testing.T) {
	l := limittest.Classed(t, "api", 10)
	limittest.ClassTraffic(t, l)
	p, err := l.AcquireClass("Critical") // no class of l: counted, and the lowest class's, which is full
	require.Error(t, err)
	p.Cancel()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(NewCollector(l, newIdle(t))))
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP r4c_adaptivelimit_class_concurrent_calls How many calls of a priority class hold a slot now.
# TYPE r4c_adaptivelimit_class_concurrent_calls gauge
r4c_adaptivelimit_class_concurrent_calls{class="critical",name="api"} 1
r4c_adaptivelimit_class_concurrent_calls{class="batch",name="api"} 6
# HELP r4c_adaptivelimit_class_rejected_total Calls of a priority class rejected at once because no slot it may use was free; in a dry run, calls that would have been.
# TYPE r4c_adaptivelimit_class_rejected_total counter
r4c_adaptivelimit_class_rejected_total{class="critical",name="api"} 0
r4c_adaptivelimit_class_rejected_total{class="batch",name="api"} 2
# HELP r4c_adaptivelimit_class_reserved_calls How many slots of the limit a priority class reserves now.
# TYPE r4c_adaptivelimit_class_reserved_calls gauge
r4c_adaptivelimit_class_reserved_calls{class="critical",name="api"} 5
r4c_adaptivelimit_class_reserved_calls{class="batch",name="api"} 0
# HELP r4c_adaptivelimit_unknown_class_total Calls that named a priority class the limiter lacks, which took its lowest class.
# TYPE r4c_adaptivelimit_unknown_class_total counter
r4c_adaptivelimit_unknown_class_total{name="api"} 1
`), "r4c_adaptivelimit_class_concurrent_calls", "r4c_adaptivelimit_class_rejected_total", "r4c_adaptivelimit_class_reserved_calls",
		"r4c_adaptivelimit_unknown_class_total"))
	require.Equal(t, 3*2+1, testutil.CollectAndCount(NewCollector(l, newIdle(t)),
		"r4c_adaptivelimit_class_concurrent_calls", "r4c_adaptivelimit_class_rejected_total", "r4c_adaptivelimit_class_reserved_calls",
		"r4c_adaptivelimit_unknown_class_total"),
		"a series per class and one of unknown classes, none for the limiter without classes")
}
