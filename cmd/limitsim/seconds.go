package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// writeSeconds prints each policy's goodput in each second of the run against the
// capacity of that second, the first second included, beside the whole run's and the
// lowest second's: what a user sees of a limiter's first seconds, which a run's total
// hides.
func writeSeconds(w io.Writer, sc *scenario, prof profile, results []*result) error {
	seconds := int(sc.duration / time.Second)
	if seconds == 0 || len(results) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\neach second's goodput, %% of that second's capacity:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.AlignRight)
	header := []string{"policy", "whole run", "lowest", ""}
	for i := range seconds {
		header = append(header, strconv.Itoa(i+1))
	}
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	capacity := prof.capacityCalls(int64(sc.duration), sc.serviceMean.Seconds(), sc.offeredLimit())
	for _, r := range results {
		shares := secondShares(r.timeline, prof, sc, seconds)
		lowest := 100.0
		row := []string{r.policy.label, percent(float64(r.total().completed), capacity), "", ""}
		for _, s := range shares {
			lowest = min(lowest, s)
			row = append(row, strconv.FormatFloat(s, 'f', 0, 64))
		}
		row[2] = strconv.FormatFloat(lowest, 'f', 0, 64)
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	return tw.Flush()
}

// secondShares adds up the timeline's windows into whole seconds, each the calls answered
// in time against what the capacity could answer in that second.
func secondShares(timeline []sample, prof profile, sc *scenario, seconds int) []float64 {
	answered := make([]float64, seconds)
	for _, s := range timeline {
		if i := int((s.at - 1) / int64(time.Second)); i < seconds {
			answered[i] += float64(s.answered)
		}
	}
	shares := make([]float64, seconds)
	for i := range shares {
		from, to := int64(i)*int64(time.Second), int64(i+1)*int64(time.Second)
		capacity := prof.capacityCalls(to, sc.serviceMean.Seconds(), sc.offeredLimit()) -
			prof.capacityCalls(from, sc.serviceMean.Seconds(), sc.offeredLimit())
		shares[i] = 100 * answered[i] / capacity
	}
	return shares
}
