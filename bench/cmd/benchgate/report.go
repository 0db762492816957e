package main

import (
	"fmt"
	"io"
	"text/tabwriter"
)

func evaluate(ts []target, s series) []outcome {
	outs := make([]outcome, len(ts))
	for i, t := range ts {
		outs[i] = t.judge(s)
	}
	return outs
}

// report prints one line per outcome and returns how many failed the gate: misses, and
// targets without a figure. Unclear targets are printed and do not fail.
func report(w io.Writer, outs []outcome) (failed int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\twant\tmedian\t95% range\tbeyond\tp\tresult")
	for _, o := range outs {
		switch o.verdict {
		case missing:
			failed++
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\tMISSING (%v)\n", o.target, o.want(), o.err)
			continue
		case miss:
			failed++
		}
		value, rng, p := "max "+o.format(o.value), "-", "-"
		if o.isRatio() {
			value = o.format(o.value)
			rng = o.format(o.lo) + " - " + o.format(o.hi)
			p = fmt.Sprintf("%.3f", o.p)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\n",
			o.target, o.want(), value, rng, o.beyond, o.passes, p, o.verdict)
	}
	tw.Flush()
	return failed
}

// summary says how the run ended, and warns when too few passes were run for any ratio to
// miss: the sign test needs 5 passes all beyond the bound to reach p < 0.05.
func summary(outs []outcome, failed int) string {
	unclears, fewest := 0, 0
	for _, o := range outs {
		if o.verdict == unclear {
			unclears++
		}
		if o.isRatio() && o.passes > 0 && (fewest == 0 || o.passes < fewest) {
			fewest = o.passes
		}
	}
	s := fmt.Sprintf("benchgate: %d of %d targets failed, %d unclear", failed, len(outs), unclears)
	if fewest > 0 && signTest(fewest, fewest) >= alpha {
		s += fmt.Sprintf("; with %d passes no ratio can miss (the sign test needs 5 or more)", fewest)
	}
	return s
}
