package adaptivelimit

import (
	"fmt"
	"iter"
)

// Cause says why a window moved the limit or kept it, in one vocabulary for every algorithm.
type Cause uint8

const (
	// CauseSteady: the window kept the limit, with nothing pushing it either way.
	CauseSteady Cause = iota
	// CauseDrop: drops backed the limit off (AIMD, Vegas, LossDelay).
	CauseDrop
	// CauseCeiling: the latency was above LossDelay's LatencyCeiling; the limit backed off.
	CauseCeiling
	// CauseLatency: the latency rose, and the limit went down (Gradient2's gradient, Vegas's
	// queue, LossDelay's latency beyond DelayTolerance).
	CauseLatency
	// CauseGrowth: the limit went up.
	CauseGrowth
	// CauseAppLimited: fewer than half the slots were used, so the limit stayed.
	CauseAppLimited
	// CauseProbe: LossDelay began or ended a probe of the no-load latency: the limit halved,
	// or came back, or, where a fleet that started in loss still queues, stayed halved.
	CauseProbe
	// CauseRelearn: LossDelay took a new baseline, and the limit went back to before the cuts
	// that did not bring the latency down.
	CauseRelearn
	// CauseBounds: the limit stayed at MinLimit with drops or a rising latency pushing it
	// down, or at MaxLimit with nothing pushing it down.
	CauseBounds

	causes = iota
)

var causeNames = [causes]string{"steady", "drop", "ceiling", "latency", "growth", "app-limited", "probe", "relearn", "bounds"}

func (c Cause) String() string {
	if c < causes {
		return causeNames[c]
	}
	return fmt.Sprintf("Cause(%d)", int(c))
}

// Causes returns every Cause, in order: what an exporter iterates to read Snapshot.Decisions.
func Causes() iter.Seq[Cause] {
	return func(yield func(Cause) bool) {
		for c := range Cause(causes) {
			if !yield(c) {
				return
			}
		}
	}
}

// direction is which way a window moved the limit: an index of the counts of decisions.
type direction uint8

const (
	limitKept direction = iota
	limitUp
	limitDown

	directions = iota
)

func directionOf(d *Decision) direction {
	switch {
	case d.LimitAfter > d.LimitBefore:
		return limitUp
	case d.LimitAfter < d.LimitBefore:
		return limitDown
	}
	return limitKept
}

// causeOf is why the window of d moved the limit, between minLimit and maxLimit, or kept it:
// d.Cause where LossDelay or an app-limited window named it, else read from d.
func causeOf(alg Algorithm, d *Decision, minLimit, maxLimit int) Cause {
	c := d.Cause
	if alg != LossDelay && c != CauseAppLimited {
		// Gradient2 takes no notice of drops: its gradient is its only signal to go down.
		dropped := d.Drops > 0 && alg != Gradient2
		down := d.Gradient > 0 && d.Gradient < 1 || dropped
		switch {
		case d.LimitAfter > d.LimitBefore:
			c = CauseGrowth
		case dropped:
			c = CauseDrop
		case down || d.LimitAfter < d.LimitBefore:
			c = CauseLatency
		case d.LimitAfter == maxLimit:
			c = CauseGrowth // nothing pushed it down: it would have grown
		}
	}
	if d.LimitAfter == d.LimitBefore {
		switch c {
		case CauseDrop, CauseCeiling, CauseLatency:
			if d.LimitAfter == minLimit {
				return CauseBounds
			}
		case CauseGrowth:
			if d.LimitAfter == maxLimit {
				return CauseBounds
			}
		}
	}
	return c
}
