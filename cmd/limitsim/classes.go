package main

import "github.com/resilience4cata/adaptivelimit"

// callClass is a priority class of a scenario's calls: its share of the offered load, and the
// reserve the adaptive limiters give it (Class.Reserve). The fixed bulkheads and no limit have
// no classes and treat every call alike, so that the table shows what the classes buy.
type callClass struct {
	name    string
	share   float64 // of the offered load; the classes' shares add up to 1
	reserve float64 // the share of the limit kept for the class
}

// Over the priority scenario's 2× load, critical calls are 25% of the nominal capacity and
// sheddable ones 175%.
const criticalShare = 0.25 / 2

// priorityReserve is the critical class's reserve in the priority scenario. The class's
// calls are half of the dependency's throughput when its capacity halves, so by Little's law
// half of the calls in flight, and a sheddable call cannot borrow an idle critical slot:
// below a reserve of about 0.6 of the limit the critical calls are turned away while the
// capacity is low. Above it, the idle critical slots at full capacity leave the dependency
// underused until the limit grows. Measured with seed 1 and the bounds below, over the four
// algorithms, the critical goodput during the halving: reserve 0.5 86.8-92.8% of offered, 0.6
// 96.0-99.4%, 0.65 98.3-99.8% (Gradient2 the 98.3%), 0.7 99.9%; the total: 0.65 98.9-99.8% of
// the capacity, 0.7 95.1-99.3%, 0.75 82.1-93.9%. 0.7 is the least that keeps every algorithm's
// critical calls (docs/simulation.md shows 0.5).
const priorityReserve = 0.7

// priorityLimits are the priority scenario's InitialLimit and MinLimit: a server that knows
// its dependency's size, and that the reserve's idle slots count in the limit. Only the
// shared pool's 30% of the limit can take sheddable calls, so the limit that fills the
// nominal 50 servers is (50 - 12.5 critical calls in flight) / (1 - 0.7), about 125: the
// initial limit. Gradient2 and AIMD regrow a limit by about one a window, so once they have
// backed off at the halving they would still be under 125 at the end of the run (the library's
// MinLimit of 1 leaves them 93.6% and 85.0% of the capacity); the floor of 100 keeps the shared
// pool at 30 slots, the halved capacity and a few, and the critical reserve at 70.
var priorityLimits = limits{initial: 125, min: 100}

func priorityClasses(reserve float64) []callClass {
	return []callClass{
		{name: "critical", share: criticalShare, reserve: reserve},
		{name: "sheddable", share: 1 - criticalShare},
	}
}

// libraryClasses are the classes as a Config takes them, nil for none.
func libraryClasses(classes []callClass) []adaptivelimit.Class {
	if len(classes) == 0 {
		return nil
	}
	out := make([]adaptivelimit.Class, len(classes))
	for i, c := range classes {
		out[i] = adaptivelimit.Class{Name: c.name, Reserve: c.reserve}
	}
	return out
}

// classNames are the names a limiter acquires with, nil for a scenario without classes.
func classNames(classes []callClass) []string {
	var names []string
	for _, c := range classes {
		names = append(names, c.name)
	}
	return names
}

// classStats counts one class's calls, over the run and by the window each was offered in:
// a call counts in the window it arrived in, whenever it is answered, so that a window's
// goodput is the share of its own calls answered in time.
type classStats struct {
	clientStats
	offeredIn, completedIn []int64 // by window of arrival
}

func (c *classStats) offer(window int) {
	c.offered++
	for len(c.offeredIn) <= window {
		c.offeredIn = append(c.offeredIn, 0)
		c.completedIn = append(c.completedIn, 0)
	}
	c.offeredIn[window]++
}

func (c *classStats) answer(window int, inTime bool) {
	if inTime {
		c.completed++
		c.completedIn[window]++
	} else {
		c.timeouts++
	}
}

// worstWindow is the least share of a window's offered calls answered in time, over the
// windows after the first settleWindows (which run at the initial limit whatever the
// algorithm), and the window it was in; -1 where no window had calls.
func (c *classStats) worstWindow() (float64, int) {
	worst, at := 1.0, -1
	for w := settleWindows; w < len(c.offeredIn); w++ {
		if n := c.offeredIn[w]; n > 0 {
			if share := float64(c.completedIn[w]) / float64(n); at < 0 || share < worst {
				worst, at = share, w
			}
		}
	}
	return worst, at
}

// phases is the share of the offered calls answered in time in each phase of the profile:
// from the start to its first marked change, between changes, and from the last to the end.
// A call counts in the phase its window of arrival starts in.
func (c *classStats) phases(prof profile, window int64) []float64 {
	offered := make([]int64, len(prof.marks)+1)
	completed := make([]int64, len(offered))
	for w := range c.offeredIn {
		start, k := int64(w)*window, 0
		for k < len(prof.marks) && prof.marks[k].at <= start {
			k++
		}
		offered[k] += c.offeredIn[w]
		completed[k] += c.completedIn[w]
	}
	shares := make([]float64, len(offered))
	for k := range shares {
		shares[k] = 1
		if offered[k] > 0 {
			shares[k] = float64(completed[k]) / float64(offered[k])
		}
	}
	return shares
}
