package main

import "fmt"

// target is one line of the gate: a median time or an allocation count, on its own or as a
// ratio to another benchmark of the same run, held to a bound.
type target struct {
	unit   string // "sec/op" or "allocs/op"
	num    key
	den    key     // the zero key: num's figure is compared as it is
	atMost bool    // the figure must be <= bound; else >= bound
	bound  float64 // a ratio, nanoseconds, or allocations
}

func (t target) isRatio() bool { return t.den != key{} }

// measure returns the target's figure in the unit its bound is in.
func (t target) measure(s series) (float64, error) {
	v, err := s.stat(t.num, t.unit)
	if err != nil {
		return 0, err
	}
	if t.isRatio() {
		d, err := s.stat(t.den, t.unit)
		if err != nil {
			return 0, err
		}
		return v / d, nil
	}
	if t.unit == "sec/op" {
		return v * 1e9, nil
	}
	return v, nil
}

func (t target) pass(v float64) bool {
	if t.atMost {
		return v <= t.bound
	}
	return v >= t.bound
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
	switch {
	case t.isRatio():
		return fmt.Sprintf("%.2fx", v)
	case t.unit == "sec/op":
		return fmt.Sprintf("%.2f ns/op", v)
	}
	return fmt.Sprintf("%g %s", v, t.unit)
}
