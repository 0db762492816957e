package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// writeClassReport prints one row per policy and class: what the class offered, what was
// answered in time, and its worst window, so that a reader sees the higher class kept and the
// lower one shed. A scenario without classes prints nothing.
func writeClassReport(w io.Writer, sc *scenario, prof profile, results []*result) error {
	if len(sc.classes) == 0 {
		return nil
	}
	fmt.Fprintf(w, "by class: offered %s; the bulkheads and no limit treat every call alike,\n", classLoads(sc))
	fmt.Fprintf(w, "the adaptive limiters reserve %s of their limit (%s):\n\n", classReserves(sc), limitBounds(sc.limits))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tclass\toffered/s\tgoodput/s\tof capacity\tof offered\tby phase\trejected\ttimeouts\tworst window\t")
	seconds := sc.duration.Seconds()
	capacityCalls := prof.capacityCalls(int64(sc.duration), sc.serviceMean.Seconds(), sc.offeredLimit())
	for _, r := range results {
		for i, c := range r.classes {
			worst, at := c.worstWindow()
			worstCell := "n/a"
			if at >= 0 {
				worstCell = percent(worst, 1) + " (" + strconv.Itoa(at+1) + ")"
			}
			row := []string{
				r.policy.label,
				sc.classes[i].name,
				strconv.FormatFloat(float64(c.offered)/seconds, 'f', 0, 64),
				strconv.FormatFloat(float64(c.completed)/seconds, 'f', 0, 64),
				percent(float64(c.completed), capacityCalls),
				percent(float64(c.completed), float64(c.offered)),
				phasesCell(c.phases(prof, int64(sc.window))),
				percent(float64(c.rejected), float64(c.offered)),
				percent(float64(c.timeouts), float64(c.offered-c.rejected)),
				worstCell,
			}
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nof capacity: the class's goodput against the capacity, so that the classes' add up to the policy's (to the rounding).\n")
	fmt.Fprintf(w, "of offered: the class's goodput against its offered calls; rejected: share of its offered calls; timeouts: share of its admitted calls.\n")
	fmt.Fprintf(w, "by phase: of offered before, during and after each change of capacity.\n")
	fmt.Fprintf(w, "worst window: the least share of a window's offered calls answered in time, from window %d on, and the window (1 is the first).\n", settleWindows+1)
	return nil
}

// classLoads tells each class's offered load, as "critical 0.25×, sheddable 1.75× the nominal capacity".
func classLoads(sc *scenario) string {
	parts := make([]string, len(sc.classes))
	for i, c := range sc.classes {
		parts[i] = fmt.Sprintf("%s %g×", c.name, c.share*sc.load)
	}
	return strings.Join(parts, ", ") + " the nominal capacity"
}

// classReserves tells the reserves, as "critical 0.7, sheddable 0".
func classReserves(sc *scenario) string {
	parts := make([]string, len(sc.classes))
	for i, c := range sc.classes {
		parts[i] = fmt.Sprintf("%s %g", c.name, c.reserve)
	}
	return strings.Join(parts, ", ")
}

func phasesCell(shares []float64) string {
	cells := make([]string, len(shares))
	for i, s := range shares {
		cells[i] = strconv.FormatFloat(100*s, 'f', 1, 64)
	}
	return strings.Join(cells, " ")
}

// limitBounds tells the adaptive limiters' InitialLimit and MinLimit, the library's where unset.
func limitBounds(l limits) string {
	initial, minLimit := l.resolved()
	return fmt.Sprintf("InitialLimit %d, MinLimit %d", initial, minLimit)
}
