package adaptivelimit

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resilience4cata/adaptivelimit/internal/clock"
)

// Clock is a monotonic clock: nanoseconds from any fixed origin, never going backwards.
type Clock interface {
	Nanotime() int64
}

// NanotimeClock returns the runtime's monotonic clock, the one time.Now reads.
func NanotimeClock() Clock { return nanotimeClock{} }

// TickClock returns the processor's tick counter where it is a safe clock (an invariant TSC
// that Linux uses as its clocksource, or arm64's virtual counter), and NanotimeClock
// elsewhere. It is the default: a read costs a third of a nanotime read where we measured.
func TickClock() Clock {
	if _, ok := tickCalibration(); ok {
		return tickClock{}
	}
	return nanotimeClock{}
}

// tickCalibration returns the nanoseconds per tick and whether ticks are a safe clock here.
var tickCalibration = sync.OnceValues(func() (float64, bool) { return clock.Calibrate(nanotime) })

// TimeClock returns a clock that follows time.Now. Use it under testing/synctest, whose fake
// time moves time.Now but not the runtime's nanotime or the tick counter.
func TimeClock() Clock { return timeClock{} }

type nanotimeClock struct{}

func (nanotimeClock) Nanotime() int64 { return nanotime() }

type tickClock struct{}

func (tickClock) Nanotime() int64 {
	nanosPerTick, _ := tickCalibration()
	return int64(float64(clock.Ticks()) * nanosPerTick)
}

var timeOrigin = time.Now()

type timeClock struct{}

func (timeClock) Nanotime() int64 { return int64(time.Since(timeOrigin)) }

// ManualClock is a Clock that moves only when told to, so that tests decide every latency
// and every window's end. It starts at 0 and is safe for concurrent use.
type ManualClock struct {
	now atomic.Int64
}

// NewManualClock returns a ManualClock at 0.
func NewManualClock() *ManualClock { return &ManualClock{} }

// Nanotime returns the clock's time.
func (c *ManualClock) Nanotime() int64 { return c.now.Load() }

// Advance moves the clock forward by d. It panics if d is negative, or if it would move the
// clock past math.MaxInt64, where it would wrap to the distant past.
func (c *ManualClock) Advance(d time.Duration) {
	if d < 0 {
		panic("adaptivelimit: ManualClock.Advance with a negative duration")
	}
	for {
		now := c.now.Load()
		if now > math.MaxInt64-int64(d) {
			panic("adaptivelimit: ManualClock.Advance past the clock's end (math.MaxInt64 nanoseconds)")
		}
		if c.now.CompareAndSwap(now, now+int64(d)) {
			return
		}
	}
}

// Set moves the clock to t nanoseconds. It panics if that is earlier than the clock's time.
func (c *ManualClock) Set(t int64) {
	for {
		now := c.now.Load()
		if t < now {
			panic("adaptivelimit: ManualClock.Set would move the clock backwards")
		}
		if c.now.CompareAndSwap(now, t) {
			return
		}
	}
}

// source reads a limiter's clock: the system clocks directly, so the call path makes no
// interface call, others through Clock. Units: ticks for the tick clock, else nanoseconds.
type source struct {
	kind         sourceKind
	clock        Clock
	nanosPerUnit float64
}

type sourceKind uint8

const (
	sourceTicks sourceKind = iota
	sourceNanotime
	sourceOther
)

func newSource(c Clock) source {
	switch c.(type) {
	case tickClock:
		nanosPerTick, _ := tickCalibration()
		return source{kind: sourceTicks, clock: c, nanosPerUnit: nanosPerTick}
	case nanotimeClock:
		return source{kind: sourceNanotime, clock: c, nanosPerUnit: 1}
	}
	return source{kind: sourceOther, clock: c, nanosPerUnit: 1}
}

// now reads the clock; acquire and done read ticks themselves, as Go does not inline now.
func (s *source) now() int64 {
	switch s.kind {
	case sourceTicks:
		return clock.Ticks()
	case sourceNanotime:
		return nanotime()
	}
	return s.clock.Nanotime()
}

// later returns t + d for a d >= 0, saturating at math.MaxInt64 rather than wrap to the past.
func later(t, d int64) int64 {
	if t > math.MaxInt64-d {
		return math.MaxInt64
	}
	return t + d
}

// units converts a duration to clock units, rounding up so that a window never ends early.
func (s *source) units(d time.Duration) int64 {
	return int64(float64(d)/s.nanosPerUnit + 0.999)
}
