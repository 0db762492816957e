package bench

import (
	"testing"
	"time"

	"github.com/resilience4cata/adaptivelimit"
)

// BenchmarkWindowClose measures a call whose Done closes a window and recomputes the limit:
// on a ManualClock moved by a whole window during every call, with MinWindowSamples 1. The
// limit is pinned to 1 (every bound 1) and one call is in flight, so every window runs the
// algorithm in full (Gradient2 is never app-limited) and keeps the limit.
// The figure includes the ManualClock's cost (an interface call per read and an atomic add
// per Advance), which a system clock does not have.
func BenchmarkWindowClose(b *testing.B) {
	const window = time.Second
	// LossDelay too, whose windows also run its probes.
	lossDelay := struct {
		name string
		alg  adaptivelimit.Algorithm
	}{"lossdelay", adaptivelimit.LossDelay}
	for _, a := range append(algorithms[:len(algorithms):len(algorithms)], lossDelay) {
		b.Run("alg="+a.name, func(b *testing.B) {
			mc := adaptivelimit.NewManualClock()
			l := newLimiter(b, adaptivelimit.Config{
				Algorithm:        a.alg,
				Clock:            mc,
				InitialLimit:     1,
				MinLimit:         1,
				MaxLimit:         1,
				Window:           window,
				MinWindowSamples: 1,
			})
			before := l.Snapshot().Windows
			var calls uint64
			b.ReportAllocs()
			for b.Loop() {
				p, err := l.Acquire()
				if err != nil {
					b.Fatal(err)
				}
				mc.Advance(window)
				p.Done(nil)
				calls++
			}
			want := calls
			if a.alg == adaptivelimit.LossDelay && calls > 1 {
				want-- // its first window ends with a probe, whose drain's end closes no window
			}
			if closed := l.Snapshot().Windows - before; closed != want {
				b.Fatalf("%d windows closed in %d calls, want %d", closed, calls, want)
			}
		})
	}
}
