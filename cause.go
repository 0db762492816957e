package adaptivelimit

import "fmt"

// Cause says why a window moved the limit or kept it, in one vocabulary for every
// algorithm: LossDelay's Reason where it gave one, else what the window's decision shows.
type Cause uint8

const (
	// CauseSteady: the window kept the limit, with nothing pushing it either way.
	CauseSteady Cause = iota
	// CauseDrop: drops backed the limit off (AIMD, Vegas; LossDelay's ReasonLoss).
	CauseDrop
	// CauseCeiling: the latency was above LossDelay's LatencyCeiling (ReasonCeiling).
	CauseCeiling
	// CauseLatency: the latency rose, and the limit went down (Gradient2's gradient, Vegas's
	// queue, LossDelay's ReasonGradient).
	CauseLatency
	// CauseGrowth: the limit went up.
	CauseGrowth
	// CauseAppLimited: fewer than half the slots were used, so the limit stayed
	// (Decision.AppLimited; LossDelay's ReasonHold).
	CauseAppLimited
	// CauseProbe: LossDelay began or ended a probe of the no-load latency (ReasonProbe).
	CauseProbe
	// CauseRelearn: LossDelay took a new baseline (ReasonRelearn).
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

// Direction is which way a window moved the limit.
type Direction uint8

const (
	LimitKept Direction = iota // the limit stayed
	LimitUp                    // the limit went up
	LimitDown                  // the limit went down

	directions = iota
)

var directionNames = [directions]string{"kept", "up", "down"}

func (d Direction) String() string {
	if d < directions {
		return directionNames[d]
	}
	return fmt.Sprintf("Direction(%d)", int(d))
}

// Decisions counts the windows that recomputed the limit, indexed by Cause and Direction:
// Decisions[CauseDrop][LimitDown] is how many windows backed the limit off for drops. Every
// window counts once, so the counts add up to Snapshot.Windows.
type Decisions [causes][directions]uint64

// direction is which way d moved the limit.
func direction(d *Decision) Direction {
	switch {
	case d.LimitAfter > d.LimitBefore:
		return LimitUp
	case d.LimitAfter < d.LimitBefore:
		return LimitDown
	}
	return LimitKept
}

// lossDelayCauses maps LossDelay's reasons to causes; ReasonNone has none.
var lossDelayCauses = [...]Cause{
	ReasonLoss: CauseDrop, ReasonCeiling: CauseCeiling, ReasonGradient: CauseLatency, ReasonGrowth: CauseGrowth,
	ReasonHold: CauseAppLimited, ReasonProbe: CauseProbe, ReasonRelearn: CauseRelearn,
}

// causeOf is why the window of d moved the limit of an algorithm between minLimit and
// maxLimit, or kept it.
func causeOf(alg Algorithm, d *Decision, minLimit, maxLimit int) Cause {
	c := CauseSteady
	if int(d.Reason) < len(lossDelayCauses) && d.Reason != ReasonNone {
		c = lossDelayCauses[d.Reason]
	} else {
		// Gradient2 takes no notice of drops: its gradient is its only signal to go down.
		down := d.Gradient > 0 && d.Gradient < 1 || d.Dropped && alg != Gradient2
		switch {
		case d.LimitAfter > d.LimitBefore:
			c = CauseGrowth
		case d.AppLimited:
			c = CauseAppLimited
		case down && d.Dropped && alg != Gradient2:
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
