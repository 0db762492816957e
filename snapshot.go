package adaptivelimit

import (
	"math"
	"runtime"
	"sync/atomic"
	"time"
)

// Decision is what one window decided, and why.
type Decision struct {
	Samples     int           // samples in the window
	Drops       int           // of which drops
	MeanLatency time.Duration // the window's mean latency (0 for AIMD, which does not time calls)
	MaxInFlight int           // the most calls in flight a sample saw, itself included
	LongLatency time.Duration // Gradient2's long-term latency used for this window; Vegas's no-load latency or LossDelay's baseline after it
	Gradient    float64       // Gradient2's or LossDelay's gradient, in [0.5, 1]; 0 when not computed
	Cause       Cause         // why the limit moved or stayed
	LimitBefore int
	LimitAfter  int
	// ExactLimit is the limit after the window as a real number: LimitAfter, or a share below
	// 1 while calls are paced (Config.SubUnitFloor), with LimitAfter 1.
	ExactLimit float64
}

// Snapshot is a limiter's state at one moment.
type Snapshot struct {
	Name       string
	Algorithm  Algorithm
	Limit      int     // how many calls may run at once
	ExactLimit float64 // Limit, or the share below 1 while calls are paced (Config.SubUnitFloor)
	InFlight   int     // how many hold a slot; with classes, the classes' InFlight added up
	MinLimit   int
	MaxLimit   int
	Disabled   bool
	DryRun     bool

	Windows       uint64        // windows that recomputed the limit
	WindowLatency time.Duration // the last such window's mean latency
	LongLatency   time.Duration // Gradient2's long-term latency, Vegas's no-load latency or LossDelay's baseline, as it stands
	Rejected      uint64        // calls rejected; in a dry run, calls that would have been
	Waiting       int           // callers of AcquireContext waiting for a slot now
	WaitAbandoned uint64        // callers that gave up waiting (MaxWait or their context); also in Rejected
	LimitChanges  uint64        // windows that moved the limit
	Last          Decision      // the last window's decision

	// Calls by outcome, with Rejected. A disabled limiter counts none; a call whose Clock or
	// DropOn panicked is in none.
	Successes uint64 // calls finished with a sample that is not a drop
	Drops     uint64 // calls finished with a sample marked as a drop
	Ignored   uint64 // calls finished with an error that DropOn ignores, Finish(Ignore), or a drop LossDelay left out: no sample
	Cancelled uint64 // permits cancelled: no sample

	// Each priority class of Config.Classes, in its order; nil without classes. Each InFlight
	// is at most its class's calls holding a slot at one moment, the same for every class, and
	// exact when no call starts or finishes beside the snapshot. So they add up to no more than
	// the calls holding a slot then, which exceed the limit only just after it fell.
	Classes []ClassSnapshot
	// Calls that named a class the limiter does not have (AcquireClass, WithClass), and went to
	// the lowest class; "" is not counted. 0 without classes.
	UnknownClass uint64

	decisions [causes][directions]uint64 // the windows by cause and direction
}

// Decisions returns how many of the Windows had cause c and kept, raised and lowered the limit;
// none for a Cause past those that Causes returns. Over every cause they add up to Windows.
func (s Snapshot) Decisions(c Cause) (kept, up, down uint64) {
	if c >= causes {
		return 0, 0, 0
	}
	n := &s.decisions[c]
	return n[limitKept], n[limitUp], n[limitDown]
}

// Snapshot returns the limiter's state without a lock, so that it may run at any rate beside
// the calls. It allocates nothing where the snapshot does not outlive its caller's frame.
func (l *Limiter) Snapshot() Snapshot {
	var b snapshotBuffer
	b.s.Classes = l.snapshot(&b)
	return b.s
}

// snapshotBuffer is a snapshot and room for its classes, in Snapshot's (or its caller's) frame.
type snapshotBuffer struct {
	s       Snapshot
	classes [MaxClasses]ClassSnapshot
}

// snapshot writes the limiter's state to b and returns its classes there, nil without classes.
func (l *Limiter) snapshot(b *snapshotBuffer) []ClassSnapshot {
	l.checkUsable()
	s, classes := &b.s, &b.classes
	*s = Snapshot{
		Name:      l.cfg.Name,
		Algorithm: l.cfg.Algorithm,
		Limit:     l.Limit(),
		InFlight:  l.InFlight(),
		MinLimit:  l.cfg.MinLimit,
		MaxLimit:  l.cfg.MaxLimit,
		Disabled:  l.enforce == disabled,
		DryRun:    l.enforce == dryRun,

		Waiting:       int(l.wait.count.Load()),
		WaitAbandoned: l.wait.abandoned.Load(),
		Ignored:       l.outcomes.ignored.Load(),
		Cancelled:     l.outcomes.cancelled.Load(),
	}
	t := l.stripes.sum(0)
	rejected := t.rejected
	var cs []ClassSnapshot
	if l.classes != nil {
		var n int
		n, rejected = l.classes.snapshots(classes) // its classes' rejections: see countRejected
		cs = classes[:n]
		s.InFlight = 0
		for _, c := range cs {
			s.InFlight += c.InFlight
		}
		s.UnknownClass = l.classes.unknowns()
	}
	s.Rejected = l.published.rejected.report(rejected)
	s.Drops = l.published.drops.report(t.drops)
	s.Successes = l.published.successes.report(t.samples - min(t.drops, t.samples))
	s.Windows, s.LimitChanges, s.LongLatency, s.Last = l.published.load(&s.decisions)
	s.WindowLatency = s.Last.MeanLatency
	s.ExactLimit = float64(s.Limit)
	if s.Windows > 0 && s.Last.ExactLimit < 1 {
		s.ExactLimit = s.Last.ExactLimit // below 1 since the last window (pace.go)
	}
	return cs
}

// published holds what the window closer publishes under a sequence lock, seq odd while it
// writes; readers retry when seq moved. Every word is atomic, so the race detector sees no race.
type published struct {
	seq     atomic.Uint64
	windows atomic.Uint64
	changes atomic.Uint64
	long    atomic.Int64
	last    [10]atomic.Uint64

	decisions [causes][directions]atomic.Uint64

	// What snapshots reported of the stripes' sums, which move back where plain increments of a
	// shared counter race or a drop's sample is read before its drop. Reports never go back, so
	// a metric sees no reset; such a drop counts as a success until the next success.
	rejected, drops, successes monotone
}

// monotone is the most a counter was reported at.
type monotone struct{ most atomic.Uint64 }

// report returns the larger of n and what was reported before, and keeps it.
func (m *monotone) report(n uint64) uint64 {
	for {
		old := m.most.Load()
		if n <= old || m.most.CompareAndSwap(old, n) {
			return max(n, old)
		}
	}
}

// publish gives d its cause and publishes it, for the window closer; before is the ExactLimit
// before the window.
func (l *Limiter) publish(d *Decision, before float64) {
	own := d.Cause
	d.Cause = causeOf(l.cfg.Algorithm, d, l.cfg.MinLimit, l.cfg.MaxLimit)
	if d.Cause == CauseBounds && d.ExactLimit != before {
		d.Cause = own // LossDelay's, below 1: the limit moved under a LimitAfter of 1
	}
	l.published.store(d, before, l.algorithm.longLatency())
}

func (p *published) store(d *Decision, before float64, long time.Duration) {
	p.seq.Add(1)
	p.windows.Add(1)
	if moved(d, before) {
		p.changes.Add(1)
	}
	dir := directionOf(d)
	switch {
	case dir != limitKept:
	case d.ExactLimit > before:
		dir = limitUp
	case d.ExactLimit < before:
		dir = limitDown
	}
	p.decisions[d.Cause][dir].Add(1)
	p.long.Store(int64(long))
	words := [len(p.last)]uint64{
		uint64(d.Samples), uint64(d.Drops), uint64(d.MeanLatency), uint64(d.MaxInFlight),
		uint64(d.LongLatency), math.Float64bits(d.Gradient), uint64(d.LimitBefore), uint64(d.LimitAfter),
		uint64(d.Cause), math.Float64bits(d.ExactLimit),
	}
	for i := range words {
		p.last[i].Store(words[i])
	}
	p.seq.Add(1)
}

// load returns what the closer published, and the windows by cause and direction in counts.
func (p *published) load(counts *[causes][directions]uint64) (windows, changes uint64, long time.Duration, d Decision) {
	var w [len(p.last)]uint64
	for {
		seq := p.seq.Load()
		if seq&1 == 1 {
			runtime.Gosched() // the closer is writing, and may have been descheduled
			continue
		}
		windows, changes, long = p.windows.Load(), p.changes.Load(), time.Duration(p.long.Load())
		for i := range w {
			w[i] = p.last[i].Load()
		}
		for c := range p.decisions {
			for dir := range p.decisions[c] {
				counts[c][dir] = p.decisions[c][dir].Load()
			}
		}
		if p.seq.Load() == seq {
			break
		}
	}
	d = Decision{
		Samples: int(w[0]), Drops: int(w[1]), MeanLatency: time.Duration(w[2]), MaxInFlight: int(w[3]),
		LongLatency: time.Duration(w[4]), Gradient: math.Float64frombits(w[5]), LimitBefore: int(w[6]),
		LimitAfter: int(w[7]), Cause: Cause(w[8]), ExactLimit: math.Float64frombits(w[9]),
	}
	return windows, changes, long, d
}
