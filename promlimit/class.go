package promlimit

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/resilience4cata/adaptivelimit"
)

// The series of a limiter with priority classes (adaptivelimit.Config.Classes), one per
// class, labelled with the limiter's name and the class's:
//
//	r4c_adaptivelimit_class_rejected_total{name,class}    counter: calls of the class rejected
//	r4c_adaptivelimit_class_concurrent_calls{name,class}  gauge: calls of the class that hold a slot
//	r4c_adaptivelimit_class_reserved_calls{name,class}    gauge: slots the class reserves under the limit
//
// and one per limiter with classes:
//
//	r4c_adaptivelimit_unknown_class_total{name}  counter: calls that named a class the limiter lacks
var (
	classRejectedDesc = prometheus.NewDesc("r4c_adaptivelimit_class_rejected_total",
		"Calls of a priority class rejected at once because no slot it may use was free; in a dry run, calls that would have been.",
		[]string{"name", "class"}, nil)
	classConcurrentDesc = prometheus.NewDesc("r4c_adaptivelimit_class_concurrent_calls",
		"How many calls of a priority class hold a slot now.", []string{"name", "class"}, nil)
	classReservedDesc = prometheus.NewDesc("r4c_adaptivelimit_class_reserved_calls",
		"How many slots of the limit a priority class reserves now.", []string{"name", "class"}, nil)
	unknownClassDesc = prometheus.NewDesc("r4c_adaptivelimit_unknown_class_total",
		"Calls that named a priority class the limiter lacks, which took its lowest class.", []string{"name"}, nil)
)

func describeClasses(ch chan<- *prometheus.Desc) {
	ch <- classRejectedDesc
	ch <- classConcurrentDesc
	ch <- classReservedDesc
	ch <- unknownClassDesc
}

func collectClasses(ch chan<- prometheus.Metric, s *adaptivelimit.Snapshot) {
	if s.Classes != nil {
		ch <- prometheus.MustNewConstMetric(unknownClassDesc, prometheus.CounterValue, float64(s.UnknownClass), s.Name)
	}
	for _, c := range s.Classes {
		ch <- prometheus.MustNewConstMetric(classRejectedDesc, prometheus.CounterValue, float64(c.Rejected), s.Name, c.Name)
		ch <- prometheus.MustNewConstMetric(classConcurrentDesc, prometheus.GaugeValue, float64(c.InFlight), s.Name, c.Name)
		ch <- prometheus.MustNewConstMetric(classReservedDesc, prometheus.GaugeValue, float64(c.Reserved), s.Name, c.Name)
	}
}
