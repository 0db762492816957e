package bench

import (
	"errors"
	"testing"

	"github.com/resilience4cata/adaptivelimit"
)

// classes are three priority classes, as the README's example has them.
var classes = []adaptivelimit.Class{{Name: "critical", Reserve: 0.2}, {Name: "standard", Reserve: 0.3}, {Name: "sheddable"}}

// BenchmarkAdmitClass is BenchmarkAdmit on a limiter with priority classes, with the
// default clock: a call of the middle class, AcquireClass then Done(nil).
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
// class finds the shared pool full, and the other pools are ones it may not use.
func BenchmarkRejectClass(b *testing.B) {
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
		b.Fatalf("AcquireClass on a full pool: %v, want ErrLimitExceeded", err)
	}
	runParallel(b, "admissions", func(pb *testing.PB) (admitted int64) {
		for pb.Next() {
			if _, err := l.AcquireClass("sheddable"); err == nil {
				admitted++
			}
		}
		return admitted
	})
}
