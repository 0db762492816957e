package adaptivelimit

import (
	"math"
	"time"
)

// algorithm moves the limit once a window. Only the goroutine that closes a window calls
// it, so implementations keep plain state.
type algorithm interface {
	// next returns d with the limit after w in LimitAfter, and how it got there.
	next(w window, d Decision) Decision
	// longLatency is the long-term latency the algorithm keeps, if it keeps one.
	longLatency() time.Duration
}

// scheduler is an algorithm that schedules its own windows (LossDelay: lossdelay_phase.go), kept
// in Limiter.schedule by New; window.go asks it, in clock units, holding closing but for dropped.
// whole is the end a plain window would have.
type scheduler interface {
	useClock(src *source, window int64)                                       // and Config.Window in src's units
	endDrain(now int64) (end int64, ok bool)                                  // ends a probe's drain; its measure's end
	shortEnd(now, whole int64, samples, drops uint64) (end int64, waits bool) // of one short of samples; or close now
	nextEnd(now, whole int64) int64                                           // of the window that starts at now
	dropped(id uint64) (least uint64)                                         // counts a drop; not 0: read the counts
	closesEarly(now, end int64, samples, drops, least uint64) bool            // the window closes at now, for loss
	judged() bool                                                             // the close judged the calls in flight too
}

func newAlgorithm(c Config) algorithm {
	switch c.Algorithm {
	case AIMD:
		return newAIMD(c)
	case Vegas:
		return newVegas(c)
	case LossDelay:
		return newLossDelay(c)
	}
	return newGradient2(c)
}

func clamp[T int | float64](v, lo, hi T) T { return max(lo, min(hi, v)) }

// saturate converts v to an integer in [lo, hi], NaN to lo. Go's conversion of a float out of
// range is undefined (math.MinInt64 on amd64), so every float limit or duration goes through it.
func saturate[T ~int | ~int64](v float64, lo, hi T) T {
	switch {
	case v >= float64(hi):
		return hi
	case v > float64(lo):
		return T(v)
	}
	return lo
}

// duration converts nanoseconds to a Duration, saturating at 0 and the largest Duration.
func duration(ns float64) time.Duration { return saturate(ns, 0, time.Duration(math.MaxInt64)) }
