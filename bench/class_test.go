package bench

import (
	"errors"
	"testing"

	"github.com/resilience4cata/adaptivelimit"
)

// classes are three priority classes, as the README's example has them.
var classes = []adaptivelimit.Class{{Name: "critical", Reserve: 0.2}, {Name: "standard", Reserve: 0.3}, {Name: "sheddable"}}

// classNames are the classes' names, for the callers of the mixed overload.
var classNames = []string{"critical", "standard", "sheddable"}

// BenchmarkAdmitClass is BenchmarkAdmit on a limiter with priority classes, with the
// default clock: a call of the middle class, AcquireClass then Done(nil). The gate holds it
// to BenchmarkAdmit's alg=gradient2/clock=default.
func BenchmarkAdmitClass(b *testing.B) {
	for _, a := range algorithms {
		b.Run("alg="+a.name, func(b *testing.B) {
			l := newLimiter(b, adaptivelimit.Config{Algorithm: a.alg, InitialLimit: 1000, MaxLimit: 1000, Classes: classes})
			runParallel(b, "rejections", func(pb *testing.PB) (rejected int64) {
				for pb.Next() {
					p, err := l.AcquireClass("standard")
					if err != nil {
						rejected++
						continue
					}
					p.Done(nil)
				}
				return rejected
			})
		})
	}
}

// BenchmarkRejectClass is BenchmarkReject on a limiter with priority classes: the lowest
// class finds every slot below its ceiling held, for the whole run.
func BenchmarkRejectClass(b *testing.B) {
	b.Run("impl=adaptivelimit", func(b *testing.B) {
		l := newLimiter(b, adaptivelimit.Config{InitialLimit: 10, MinLimit: 10, MaxLimit: 10, Classes: classes})
		var held []adaptivelimit.Permit
		for {
			p, err := l.AcquireClass("sheddable")
			if err != nil {
				break
			}
			held = append(held, p.Move())
		}
		defer func() {
			for i := range held {
				held[i].Cancel()
			}
		}()
		if _, err := l.AcquireClass("sheddable"); !errors.Is(err, adaptivelimit.ErrLimitExceeded) {
			b.Fatalf("AcquireClass at the class's ceiling: %v, want ErrLimitExceeded", err)
		}
		runParallel(b, "admissions", func(pb *testing.PB) (admitted int64) {
			for pb.Next() {
				if _, err := l.AcquireClass("sheddable"); err == nil {
					admitted++
				}
			}
			return admitted
		})
	})
}

// BenchmarkOverloadClass is BenchmarkOverload on a limiter with priority classes: each
// caller's attempts go round the three classes, highest first. The gate holds it to
// BenchmarkOverload's impl=adaptivelimit.
func BenchmarkOverloadClass(b *testing.B) {
	b.Run("impl=adaptivelimit", func(b *testing.B) {
		l := newLimiter(b, adaptivelimit.Config{InitialLimit: overloadLimit, MinLimit: overloadLimit, MaxLimit: overloadLimit, Classes: classes})
		overloadRound(b, func(i int) bool {
			p, err := l.AcquireClass(classNames[i%len(classNames)])
			if err != nil {
				return false
			}
			work()
			p.Done(nil)
			return true
		})
	})
}

// BenchmarkSnapshotClass measures Snapshot of a limiter with priority classes, while nothing
// runs beside it: what a metrics exporter pays at each collection.
func BenchmarkSnapshotClass(b *testing.B) {
	l := newLimiter(b, adaptivelimit.Config{Classes: classes})
	b.ReportAllocs()
	for b.Loop() {
		if s := l.Snapshot(); len(s.Classes) != len(classes) {
			b.Fatalf("%d classes in the snapshot, want %d", len(s.Classes), len(classes))
		}
	}
}
