package adaptivelimit

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
	"testing"
	"time"
)

// Fuzz targets. Their seed corpora are in testdata/fuzz; go test runs those as tests, and
// go test -fuzz=FuzzX explores from them.

// Any Config gives a limiter or a *ConfigError, never a panic; a limiter keeps its limit in
// its bounds and its count of calls in flight right over random traffic.
func FuzzConfig(f *testing.F) {
	f.Add(uint8(0), 0, 0, 0, int64(0), 0, 0, 0, 0.0, 0.0, 0.0, false, false, []byte{0, 0, 3, 7, 7, 7, 4, 0, 5, 6})
	f.Add(uint8(2), math.MaxInt, 1, math.MaxInt, int64(time.Millisecond), 1, 1, math.MaxInt, 1.0, 1.0, 0.5, false, true, []byte{0, 1, 2, 0xff, 3, 3, 3})
	f.Add(uint8(1), maxLimitValue, maxLimitValue, maxLimitValue, int64(time.Hour), 1, maxWindows, maxQueueSize, 1.0, 1.0, 0.9, false, false, []byte{0, 0xff, 4, 0xff, 3})
	f.Fuzz(func(t *testing.T, alg uint8, initial, minLimit, maxLimit int, window int64, minSamples, longWindow, queue int,
		smoothing, tolerance, backoff float64, disabled, dryRun bool, traffic []byte) {
		clock := NewManualClock()
		c := Config{
			Algorithm: Algorithm(alg), InitialLimit: initial, MinLimit: minLimit, MaxLimit: maxLimit,
			Window: time.Duration(window), MinWindowSamples: minSamples, LongWindow: longWindow, QueueSize: queue,
			Smoothing: smoothing, RTTTolerance: tolerance, BackoffRatio: backoff,
			Disabled: disabled, DryRun: dryRun, Clock: clock,
		}
		l, err := New(c)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) || l != nil || ce.Code() == "" || ce.Key == "" || ce.Rule == "" {
				t.Fatalf("New(%+v) = %v, %v: want a *ConfigError naming key, rule and code", c, l, err)
			}
			return
		}
		fuzzTraffic(t, l, clock, traffic)
	})
}

// fuzzTraffic runs the calls that ops describe, a byte each, and checks the limiter after
// every one.
func fuzzTraffic(t *testing.T, l *Limiter, clock *ManualClock, ops []byte) {
	var held []Permit
	for i, b := range ops[:min(len(ops), 2000)] {
		switch b % 8 {
		case 0, 1, 2:
			if p, err := l.Acquire(); err == nil {
				held = append(held, p.Move())
			} else if !errors.Is(err, ErrLimitExceeded) {
				t.Fatalf("op %d: Acquire: %v", i, err)
			}
		case 3, 4, 5, 6:
			if len(held) == 0 {
				continue
			}
			p := &held[len(held)-1]
			switch b % 8 {
			case 3:
				p.Done(nil)
			case 4:
				p.Done(context.DeadlineExceeded)
			case 5:
				p.Done(errors.New("404"))
			case 6:
				p.Cancel()
			}
			held = held[:len(held)-1]
		case 7:
			clock.Advance(time.Duration(b>>3) * l.cfg.Window / 16)
		}
		s := l.Snapshot()
		inFlight := len(held)
		if s.Disabled {
			inFlight = 0
		}
		if s.Limit < s.MinLimit || s.Limit > s.MaxLimit || s.InFlight != inFlight || s.Last.MeanLatency < 0 {
			t.Fatalf("op %d: limit %d outside [%d, %d], or %d in flight with %d held, or latency %v",
				i, s.Limit, s.MinLimit, s.MaxLimit, s.InFlight, inFlight, s.Last.MeanLatency)
		}
	}
	for i := range held {
		held[i].Done(nil)
	}
	if l.InFlight() != 0 {
		t.Fatalf("%d in flight after every permit was finished", l.InFlight())
	}
}

// Each algorithm over random windows, from any valid configuration: the limit stays in its
// bounds, and nothing it reports is NaN or negative.
func FuzzAlgorithm(f *testing.F) {
	f.Add(uint8(1), 20, 1, 200, 4, 600, 0.2, 1.5, 0.9, []byte{10, 0, 0, 0, 1, 0, 0, 0, 20, 0})
	f.Add(uint8(2), 20, 1, 200, 4, 600, 0.2, 1.5, 0.9, []byte{10, 0, 1, 0, 1, 0, 0, 0, 20, 0, 10, 0, 0, 0, 1, 0, 0, 0, 20, 0})
	f.Add(uint8(1), maxLimitValue, 1, maxLimitValue, maxQueueSize, 1, 1.0, 1.0, 0.5, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	// LossDelay, a start in loss, then windows that took no time: its probes read 0 after 0.
	f.Add(uint8(3), 20, 5, 200, 4, 600, 0.2, 1.5, 0.9, []byte{
		0xe7, 3, 200, 0x40, 0xa5, 0xae, 2, 0, 2, 0,
		0xe7, 3, 0, 0, 0, 0, 0, 0, 30, 0, 0xe7, 3, 0, 0, 0, 0, 0, 0, 30, 0, 0xe7, 3, 0, 0, 0, 0, 0, 0, 30, 0})
	f.Fuzz(func(t *testing.T, alg uint8, initial, minLimit, maxLimit, queue, longWindow int,
		smoothing, tolerance, backoff float64, windows []byte) {
		c, err := Config{
			Algorithm: Algorithm(alg%4 + 1), InitialLimit: initial, MinLimit: minLimit, MaxLimit: maxLimit,
			QueueSize: queue, LongWindow: longWindow, Smoothing: smoothing, RTTTolerance: tolerance, BackoffRatio: backoff,
		}.resolved()
		if err != nil {
			return // FuzzConfig covers what New refuses
		}
		a := newAlgorithm(c)
		limit := c.InitialLimit
		for len(windows) >= 10 {
			// samples, drops, a latency of a 32-bit mantissa and a binary exponent, in flight
			samples := uint64(binary.LittleEndian.Uint16(windows)) + 1
			w := window{
				samples:     samples,
				drops:       uint64(windows[2]) % (samples + 1),
				meanLatency: math.Ldexp(float64(binary.LittleEndian.Uint32(windows[3:])), int(windows[7]%72)),
				maxInFlight: int(binary.LittleEndian.Uint16(windows[8:])) * int(1+windows[2]>>4),
			}
			windows = windows[10:]
			d := a.next(w, Decision{LimitBefore: limit})
			if d.LimitAfter < c.MinLimit || d.LimitAfter > c.MaxLimit {
				t.Fatalf("%v after %+v: limit %d outside [%d, %d]", c.Algorithm, w, d.LimitAfter, c.MinLimit, c.MaxLimit)
			}
			if floor := subUnitFloor(c); d.ExactLimit != 0 && !(d.ExactLimit >= floor && d.ExactLimit <= float64(c.MaxLimit)) ||
				d.ExactLimit != 0 && d.ExactLimit >= 1 && int(d.ExactLimit) != d.LimitAfter {
				t.Fatalf("%v after %+v: exact limit %v outside [%v, %d] or apart from %d", c.Algorithm, w, d.ExactLimit, floor, c.MaxLimit, d.LimitAfter)
			}
			if math.IsNaN(d.Gradient) || d.Gradient != 0 && (d.Gradient < 0.5 || d.Gradient > 1) ||
				d.LongLatency < 0 || a.longLatency() < 0 {
				t.Fatalf("%v after %+v: %+v, long-term latency %v", c.Algorithm, w, d, a.longLatency())
			}
			limit = d.LimitAfter
		}
	})
}

// The window logic over a clock that stands still, jumps by years, steps back by hours or
// runs into math.MaxInt64, and random outcomes: every window reports exactly the samples
// and drops it had and their mean latency (no negative latency, no overflow of the sums),
// and no window is stuck.
func FuzzWindow(f *testing.F) {
	f.Add(uint8(0), uint8(1), int64(0), []byte{0, 0, 7, 3, 5, 8 | 0x10, 3, 0, 4, 8 | 0x20, 3})
	f.Add(uint8(1), uint8(3), int64(math.MaxInt64-int64(time.Hour)), []byte{0, 1, 2, 7 | 0xf0, 3, 4, 8 | 0x30, 5, 6, 0, 3})
	f.Add(uint8(0), uint8(2), int64(math.MinInt64), []byte{0, 8 | 0x40, 3, 0, 8 | 0x10, 3, 9, 0, 3})
	f.Fuzz(func(t *testing.T, alg uint8, minSamples uint8, start int64, ops []byte) {
		c := Config{Algorithm: Algorithm(alg%4 + 1), InitialLimit: 8, MaxLimit: 16, MinWindowSamples: 1 + int(minSamples%8)}
		l, clock := newStep(t, c, start)
		m := windowModel{t: t, l: l, id: l.window.id.Load()}
		type call struct {
			p     Permit
			start int64
		}
		var held []call
		finish := func(err error) {
			if len(held) == 0 {
				return
			}
			c := &held[len(held)-1]
			held = held[:len(held)-1]
			now := clock.now.Load()
			latency := elapsed(c.start, now)
			if c.p.start == untimed {
				latency = 0 // AIMD's, before its first departure
			}
			leftOut := c.p.start < l.leftOut.Load() // a drop of the start's calls (noteDrop)
			if err == errDeparted {
				after := l.departAfter.Load()
				if c.p.start != untimed && after > 0 && elapsed(c.p.start, now) > uint64(after) && !leftOut {
					m.add(latency, true)
				}
				c.p.Finish(Departed)
				m.check()
				return
			}
			if err == nil || err == context.DeadlineExceeded && !leftOut {
				m.add(latency, err != nil)
			}
			c.p.Done(err)
			m.check()
		}
		for _, b := range ops[:min(len(ops), 2000)] {
			now := clock.now.Load()
			switch b % 10 {
			case 0, 1, 2:
				if p, err := l.Acquire(); err == nil {
					held = append(held, call{p.Move(), now})
				}
			case 3, 4:
				finish(nil)
			case 5:
				finish(context.DeadlineExceeded)
			case 6:
				if b>>4&1 == 0 {
					finish(errors.New("404"))
				} else {
					finish(errDeparted)
				}
			case 7:
				clock.now.Store(later(now, int64(b>>4)*int64(100*time.Millisecond)))
			case 8:
				switch b >> 4 % 5 {
				case 0: // stands still
				case 1:
					clock.now.Store(later(now, int64(b>>6+1)*int64(365*24*time.Hour)))
				case 2:
					clock.now.Store(max(now, math.MinInt64+int64(5*time.Hour)) - int64(5*time.Hour))
				case 3:
					clock.now.Store(math.MaxInt64 - int64(b>>6)*int64(time.Second)/2)
				case 4:
					clock.now.Store(later(now, int64(c.Window)))
				}
			case 9:
				if len(held) > 0 {
					held[len(held)-1].p.Cancel()
					held = held[:len(held)-1]
				}
			}
		}
		for len(held) > 0 {
			finish(nil)
		}
		// No stuck window: enough samples, then a window of time, close one.
		now := clock.now.Load()
		paced := int64(c.MinWindowSamples+3) * pacedWindows * int64(time.Second) // turns a limit below 1 waits for
		if now > math.MaxInt64-3*int64(time.Second)-paced {
			return
		}
		before := l.Snapshot().Windows
		step := func() {
			if gap, next, now := l.slots.gap.Load(), l.slots.next.Load(), clock.now.Load(); gap != 0 && next > now && next-now <= gap {
				// A limit below 1: the next call waits for its turn, at most pacedWindows
				// windows away (pace.go); one further away is a clock that stepped back.
				clock.now.Store(next)
			}
			p, err := l.Acquire()
			if err != nil {
				t.Fatalf("nothing held, and Acquire: %v", err)
			}
			held = append(held, call{p.Move(), clock.now.Load()})
			finish(nil)
		}
		clock.now.Add(int64(time.Second))
		step() // the window now ends within a second: this moved one that a step back left far ahead
		for range c.MinWindowSamples {
			step()
		}
		clock.now.Add(int64(time.Second))
		step()
		if a, ok := l.algorithm.(*lossDelay); ok && a.step >= draining && l.Snapshot().Windows == before {
			// That close ended LossDelay's short probe's drain, which publishes nothing: the
			// probe then measures for a fifth of a window at most.
			clock.now.Add(int64(time.Second))
			step()
		}
		if l.Snapshot().Windows == before {
			t.Fatalf("no window closed in two windows' time with enough samples")
		}
	})
}

// errDeparted stands for Finish(Departed) in FuzzWindow's finish.
var errDeparted = errors.New("departed")

// windowModel keeps the samples of the open window, as the limiter should.
type windowModel struct {
	t              *testing.T
	l              *Limiter
	windows        uint64
	id             uint64 // the window under way's id (window.go)
	samples, drops int
	sum            float64 // nanoseconds
}

func (m *windowModel) add(latency uint64, drop bool) {
	m.sum += float64(latency)
	m.samples++
	if drop {
		m.drops++
	}
}

// check compares a window that closed with the model, and starts the next. A new window
// that published no decision is the one that follows LossDelay's short probe's drain: the
// samples of the calls admitted before the probe, which finished while it drained, are left
// out of every window (window.go), and so the model leaves them out.
func (m *windowModel) check() {
	s := m.l.Snapshot()
	id := m.l.window.id.Load()
	if s.Windows == m.windows {
		if id != m.id {
			if a, ok := m.l.algorithm.(*lossDelay); !ok || a.step < draining {
				m.t.Fatalf("window %d began without a decision, and no probe drained", id)
			}
			m.id = id
			m.samples, m.drops, m.sum = 0, 0, 0
		}
		return
	}
	m.windows, m.id = s.Windows, id
	d, want := s.Last, duration(m.sum/float64(max(m.samples, 1)))
	if d.Samples != m.samples || d.Drops != m.drops || d.MeanLatency < 0 ||
		math.Abs(float64(d.MeanLatency-want)) > float64(want)*1e-9+2 {
		m.t.Fatalf("window %d: %+v; want %d samples, %d drops, latency %v", s.Windows, d, m.samples, m.drops, want)
	}
	m.samples, m.drops, m.sum = 0, 0, 0
}

// The stripes: the assembly (where there is one) and the atomic adds keep the same counters
// as a plain model, and the two halves of the latency sum add up to the exact sum.
func FuzzStripes(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 1, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		var plain, atomics, model stripe
		var sumHi, sumLo uint64 // the exact 128-bit sum of latencies
		for len(ops) >= 17 {
			latency, peak := binary.LittleEndian.Uint64(ops), binary.LittleEndian.Uint64(ops[8:])
			drop := uint64(ops[16] & 1)
			ops = ops[17:]
			addSample(&plain, latency, drop, peak)
			addSampleAtomic(&atomics, latency, drop, peak)
			model.latencyLow += latency & (1<<32 - 1)
			model.latencyHigh += latency >> 32
			model.samples++
			model.drops += drop
			model.peak = max(model.peak, peak)
			var carry uint64
			sumLo, carry = bits.Add64(sumLo, latency, 0)
			sumHi += carry
		}
		if plain != model || atomics != model {
			t.Fatalf("addSample %+v, addSampleAtomic %+v, model %+v", plain, atomics, model)
		}
		if model.samples < 1<<31 {
			// latencyHigh<<32 + latencyLow, in 128 bits
			lo, carry := bits.Add64(model.latencyHigh<<32, model.latencyLow, 0)
			hi := model.latencyHigh>>32 + carry
			if lo != sumLo || hi != sumHi {
				t.Fatalf("halves add up to %#x:%#x, want %#x:%#x", hi, lo, sumHi, sumLo)
			}
		}
	})
}
