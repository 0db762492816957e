package otellimit

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"

	"github.com/resilience4cata/adaptivelimit"
)

// The instruments of a limiter with priority classes (adaptivelimit.Config.Classes), one
// observation per class, with the limiter's name in "name" and the class's in "class":
//
//	r4c.adaptivelimit.class.rejected          counter {call}: calls of the class rejected
//	r4c.adaptivelimit.class.concurrent.calls  gauge {call}: calls of the class that hold a slot
//	r4c.adaptivelimit.class.reserved.calls    gauge {call}: slots the class reserves under the limit
//
// and one per limiter with classes, with its name in "name":
//
//	r4c.adaptivelimit.unknown.class           counter {call}: calls that named a class the limiter lacks
//
// registerClasses creates them in m, observes the snapshots that source returns, and returns
// a registration that unregisters both reg, the other instruments', and its own.
func registerClasses(m metric.Meter, source func() []adaptivelimit.Snapshot, reg metric.Registration) (metric.Registration, error) {
	rejected, err1 := m.Int64ObservableCounter("r4c.adaptivelimit.class.rejected", metric.WithUnit("{call}"),
		metric.WithDescription("Calls of a priority class rejected at once because no slot it may use was free; in a dry run, calls that would have been."))
	concurrent, err2 := m.Int64ObservableGauge("r4c.adaptivelimit.class.concurrent.calls", metric.WithUnit("{call}"),
		metric.WithDescription("How many calls of a priority class hold a slot now."))
	reserved, err3 := m.Int64ObservableGauge("r4c.adaptivelimit.class.reserved.calls", metric.WithUnit("{call}"),
		metric.WithDescription("How many slots of the limit a priority class reserves now."))
	unknown, err4 := m.Int64ObservableCounter("r4c.adaptivelimit.unknown.class", metric.WithUnit("{call}"),
		metric.WithDescription("Calls that named a priority class the limiter lacks, which took its lowest class."))
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return nil, errors.Join(err, reg.Unregister())
	}
	classes, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for _, s := range source() {
			if s.Classes != nil {
				o.ObserveInt64(unknown, int64(s.UnknownClass), metric.WithAttributeSet(attribute.NewSet(attribute.String("name", s.Name))))
			}
			for _, c := range s.Classes {
				attrs := metric.WithAttributeSet(attribute.NewSet(attribute.String("name", s.Name), attribute.String("class", c.Name)))
				o.ObserveInt64(rejected, int64(c.Rejected), attrs)
				o.ObserveInt64(concurrent, int64(c.InFlight), attrs)
				o.ObserveInt64(reserved, int64(c.Reserved), attrs)
			}
		}
		return nil
	}, rejected, concurrent, reserved, unknown)
	if err != nil {
		return nil, errors.Join(err, reg.Unregister())
	}
	return &registrations{rs: []metric.Registration{reg, classes}}, nil
}

// registrations unregisters each of its registrations.
type registrations struct {
	embedded.Registration
	rs []metric.Registration
}

func (r *registrations) Unregister() error {
	var errs []error
	for _, r := range r.rs {
		errs = append(errs, r.Unregister())
	}
	return errors.Join(errs...)
}
