package otellimit

import (
	"fmt"
	"reflect"
	"sync"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/integration"
)

// claimed holds the names of the limiters that Register observes, by meter provider: two
// limiters of one name would report the same attribute sets, and the later observation would
// hide the earlier one.
var claimed struct {
	sync.Mutex
	names map[metric.MeterProvider]map[string]bool
}

// claim claims the limiters' names in mp, or returns an error that names the first name that
// two of them have, or that a registration in mp already has. release gives them back. A
// meter provider that cannot be a map key is checked within the one registration.
func claim(mp metric.MeterProvider, limiters []*adaptivelimit.Limiter) (release func(), err error) {
	claimed.Lock()
	defer claimed.Unlock()
	taken := map[string]bool{}
	comparable := reflect.TypeOf(mp).Comparable()
	if comparable && claimed.names[mp] != nil {
		taken = claimed.names[mp]
	}
	names := make([]string, len(limiters))
	for i, s := range integration.Snapshots(limiters...) {
		names[i] = s.Name
	}
	for i, name := range names {
		if taken[name] {
			for _, name := range names[:i] {
				delete(taken, name)
			}
			return nil, fmt.Errorf("otellimit: two limiters are named %q in one meter provider: their observations would be the same (set Config.Name)", name)
		}
		taken[name] = true
	}
	if !comparable {
		return func() {}, nil
	}
	if claimed.names == nil {
		claimed.names = make(map[metric.MeterProvider]map[string]bool)
	}
	claimed.names[mp] = taken
	return func() {
		claimed.Lock()
		defer claimed.Unlock()
		for _, name := range names {
			delete(taken, name)
		}
		if len(taken) == 0 {
			delete(claimed.names, mp)
		}
	}, nil
}

// releasing is a registration that gives its names back when it is unregistered.
type releasing struct {
	embedded.Registration
	reg     metric.Registration
	release func()
	once    sync.Once
}

func (r *releasing) Unregister() error {
	r.once.Do(r.release)
	return r.reg.Unregister()
}
