package main

import (
	"fmt"
	"slices"
)

// alpha is the sign test's level: a target misses only when its passes land beyond the bound
// so often that noise around a median on the bound would do so less than 5% of the time.
const alpha = 0.05

// target is one line of the gate: the ratio of two benchmarks' times in each pass, or one
// benchmark's allocation count, held to a bound.
type target struct {
	unit   string // "sec/op" for a ratio, "allocs/op" for a count
	num    key
	den    key     // the zero key for a count
	atMost bool    // the figure must be <= bound; else >= bound
	bound  float64 // a ratio, or allocations
}

func (t target) isRatio() bool { return t.den != key{} }

func (t target) within(v float64) bool {
	if t.atMost {
		return v <= t.bound
	}
	return v >= t.bound
}

type verdict int

const (
	ok      verdict = iota
	unclear         // the median is beyond the bound, but not significantly
	miss
	missing // no figure: a benchmark did not run in every pass
)

func (v verdict) String() string { return [...]string{"ok", "UNCLEAR", "MISS", "MISSING"}[v] }

// outcome is a target's verdict on one run.
type outcome struct {
	target
	verdict
	value  float64 // the paired ratios' median; for a count, its largest value
	lo, hi float64 // the range of the middle 95% of the paired ratios
	beyond int     // passes beyond the bound
	passes int
	p      float64 // the sign test's p-value for beyond of passes
	err    error   // why there is no figure
}

// judge measures t in s. A ratio misses when its median is beyond the bound and the sign test
// says the passes beyond it are no accident; a median beyond without that is unclear. A count
// misses when any pass is beyond: one allocation is deterministic, not noise.
func (t target) judge(s series) outcome {
	o := outcome{target: t}
	var vs []float64
	if t.isRatio() {
		vs, o.err = s.paired(t.num, t.den, t.unit)
	} else {
		vs, o.err = s.passes(t.num, t.unit)
	}
	if o.err != nil {
		o.verdict = missing
		return o
	}
	o.passes = len(vs)
	for _, v := range vs {
		if !t.within(v) {
			o.beyond++
		}
	}
	if !t.isRatio() {
		o.value = slices.Max(vs)
		if o.beyond > 0 {
			o.verdict = miss
		}
		return o
	}
	o.value, o.lo, o.hi = median(vs), quantile(vs, 0.025), quantile(vs, 0.975)
	o.p = signTest(o.beyond, o.passes)
	switch {
	case t.within(o.value):
		o.verdict = ok
	case o.p < alpha:
		o.verdict = miss
	default:
		o.verdict = unclear
	}
	return o
}

func (t target) String() string {
	if t.isRatio() {
		return t.num.String() + " / " + t.den.String()
	}
	return t.num.String()
}

func (t target) want() string {
	op := ">="
	if t.atMost {
		op = "<="
	}
	return op + " " + t.format(t.bound)
}

func (t target) format(v float64) string {
	if t.isRatio() {
		return fmt.Sprintf("%.3fx", v)
	}
	return fmt.Sprintf("%g %s", v, t.unit)
}
