package main

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// outcome is a target with its figure from one run; err says why there is no figure.
type outcome struct {
	target
	value float64
	err   error
}

func (o outcome) ok() bool { return o.err == nil && o.pass(o.value) }

func evaluate(ts []target, s series) []outcome {
	outs := make([]outcome, len(ts))
	for i, t := range ts {
		v, err := t.measure(s)
		outs[i] = outcome{t, v, err}
	}
	return outs
}

// report prints one line per outcome and returns how many missed, missing figures included.
func report(w io.Writer, outs []outcome) (misses int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\twant\tmeasured\tresult")
	for _, o := range outs {
		got, result := "-", "ok"
		switch {
		case o.err != nil:
			result = "MISSING (" + o.err.Error() + ")"
		case !o.ok():
			got, result = o.format(o.value), "MISS"
		default:
			got = o.format(o.value)
		}
		if !o.ok() {
			misses++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", o.target, o.want(), got, result)
	}
	tw.Flush()
	return misses
}
