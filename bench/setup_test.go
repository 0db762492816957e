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

// floorClocks read what the limiter reads with each clock: the tick counter itself where
// TickClock is the tick counter, else nanotime, which TickClock falls back to.
var floorClocks = []struct {
	name string
	read func() int64
}{
	{"ticks", tickRead()},
	{"nanotime", nanotime},
	{"time", adaptivelimit.TimeClock().Nanotime},
}

// nanotime reads the runtime's monotonic clock as the limiter does: NanotimeClock and its
// method inline, leaving the one call to the runtime.
func nanotime() int64 { return adaptivelimit.NanotimeClock().Nanotime() }

func tickRead() func() int64 {
	// The system clocks are distinct empty structs: the two are equal when TickClock fell back.
	if adaptivelimit.TickClock() != adaptivelimit.NanotimeClock() {
		return clock.Ticks
	}
	return nanotime
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

// runParallel runs body on each goroutine of b.RunParallel, after resetting the timer, and
// fails the benchmark when the bodies count any event that must not happen in their loops (a
// rejection while admitting, an admission while rejecting). body is called once a goroutine
// and owns its loop, so the measured loop makes no call beyond those of the code it measures.
func runParallel(b *testing.B, unwanted string, body func(pb *testing.PB) int64) {
	b.Helper()
	var n atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) { n.Add(body(pb)) })
	expectNone(b, n.Load(), unwanted)
}

// expectNone fails the benchmark when something that must not happen in its loop did.
func expectNone(b *testing.B, n int64, what string) {
	b.Helper()
	if n != 0 {
		b.Errorf("%d %s, want none", n, what)
	}
}
