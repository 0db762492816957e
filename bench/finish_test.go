package bench

import (
	"errors"
	"testing"

	"github.com/resilience4cata/adaptivelimit"
)

// BenchmarkFinish measures an admitted call that finishes without a sample, beside one that
// finishes with one: Acquire, then Cancel, Done with an error that DropOn ignores, or
// Finish(Ignore) (what httplimit and grpclimit do with a status that says nothing about load),
// or Finish(Sample). The limit is far above the calls in flight, so nothing is rejected.
func BenchmarkFinish(b *testing.B) {
	notFound := errors.New("404")
	// The finish is chosen by a switch in the loop: a func value would move the permit to the
	// heap.
	for kind, name := range []string{"cancel", "ignored", "finish=ignore", "finish=sample"} {
		b.Run("outcome="+name, func(b *testing.B) {
			l := newLimiter(b, adaptivelimit.Config{InitialLimit: 1000, MaxLimit: 1000})
			runParallel(b, "rejections", func(pb *testing.PB) (rejected int64) {
				for pb.Next() {
					p, err := l.Acquire()
					if err != nil {
						rejected++
						continue
					}
					switch kind {
					case 0:
						p.Cancel()
					case 1:
						p.Done(notFound)
					case 2:
						p.Finish(adaptivelimit.Ignore)
					default:
						p.Finish(adaptivelimit.Sample)
					}
				}
				return rejected
			})
		})
	}
}
