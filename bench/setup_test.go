package bench

import (
	"sync/atomic"
	"testing"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/internal/clock"
)

var algorithms = []struct {
	name string
	alg  adaptivelimit.Algorithm
}{
	{"gradient2", adaptivelimit.Gradient2},
	{"aimd", adaptivelimit.AIMD},
}

// limiterClocks are the clocks a limiter is measured with; nil is the limiter's default.
var limiterClocks = []struct {
	name  string
	clock adaptivelimit.Clock
}{
	{"default", nil},
	{"ticks", adaptivelimit.TickClock()},
	{"nanotime", adaptivelimit.NanotimeClock()},
	{"time", adaptivelimit.TimeClock()},
}

// floorClocks read what the limiter reads with each clock: TickClock falls back to nanotime
// where the tick counter is not safe, and the time clock is read through its interface.
var floorClocks = []struct {
	name string
	read func() int64
}{
	{"ticks", tickRead()},
	{"nanotime", clock.Nanotime},
	{"time", adaptivelimit.TimeClock().Nanotime},
}

func tickRead() func() int64 {
	if clock.TicksOK() {
		return clock.Ticks
	}
	return clock.Nanotime
}

// sink keeps clock reads alive.
var sink atomic.Int64

func newLimiter(b *testing.B, c adaptivelimit.Config) *adaptivelimit.Limiter {
	b.Helper()
	l, err := adaptivelimit.New(c)
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// expectNone fails the benchmark when something that must not happen in its loop did.
func expectNone(b *testing.B, n int64, what string) {
	b.Helper()
	if n != 0 {
		b.Errorf("%d %s, want none", n, what)
	}
}
