package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// writeReport prints what the scenario was and one table row per policy.
func writeReport(w io.Writer, sc *scenario, prof profile, results []*result) error {
	describe(w, sc, prof)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "policy\tgoodput/s\tof capacity\tp50 ms\tp99 ms\trejected\ttimeouts\tadapt (windows)\t"
	if sc.clients > 1 {
		header += "Σlimit/capacity\tJain\t"
	}
	fmt.Fprintln(tw, header)
	capacityCalls := prof.serverSeconds(int64(sc.duration)) / sc.serviceMean.Seconds()
	for _, r := range results {
		t := r.total()
		admitted := t.offered - t.rejected
		row := []string{
			r.policy.label,
			strconv.FormatFloat(float64(t.completed)/sc.duration.Seconds(), 'f', 0, 64),
			percent(float64(t.completed), capacityCalls),
			millis(r.latency.quantile(0.50)),
			millis(r.latency.quantile(0.99)),
			percent(float64(t.rejected), float64(t.offered)),
			percent(float64(t.timeouts), float64(admitted)),
			adaptCell(r, prof, sc),
		}
		if sc.clients > 1 {
			row = append(row, limitShare(r), strconv.FormatFloat(r.jain(), 'f', 3, 64))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\ngoodput: calls answered within the timeout; of capacity: against what the servers could complete (servers / mean service time).\n")
	fmt.Fprintf(w, "p50, p99: latency of admitted calls, a timed-out call counting as its timeout; rejected: share of offered calls; timeouts: share of admitted calls.\n")
	fmt.Fprintf(w, "adapt: windows after each marked capacity change until the limit stays within %g-%g× the new capacity for %d windows (- never).\n",
		adaptLow, adaptHigh, adaptHold)
	if sc.clients > 1 {
		fmt.Fprintf(w, "Σlimit/capacity: the clients' limits added up, against the capacity, averaged over the windows; Jain: fairness of the clients' goodput (1 is equal).\n")
	}
	return nil
}

func describe(w io.Writer, sc *scenario, prof profile) {
	how := "simulated"
	if sc.real {
		how = "in real time, against HTTP servers on loopback"
	}
	fmt.Fprintf(w, "scenario %s, seed %d: %s %s, window %s\n", sc.name, sc.seed, sc.duration, how, sc.window)
	fmt.Fprintf(w, "dependency: %d servers, lognormal service time (mean %s, sigma %g), FIFO queue; capacity %s\n",
		sc.servers, sc.serviceMean, sc.serviceSigma, capacityStory(prof))
	load := fmt.Sprintf("open-loop Poisson arrivals at %g× capacity (%.0f calls/s)", sc.load, sc.offeredRate())
	if sc.users > 0 {
		load = fmt.Sprintf("closed loop, %d users thinking %s on average between calls (up to %g× capacity)", sc.users, sc.think, sc.load)
	}
	fleet := "one client"
	if sc.clients > 1 {
		fleet = fmt.Sprintf("%d clients, each with its own limiter, sharing the dependency", sc.clients)
	}
	fmt.Fprintf(w, "load: %s; %s; every call times out after %s\n\n", load, fleet, sc.timeout)
}

// capacityStory tells the capacity's marked changes, as "50, 25 at 1m0s, 50 at 2m0s".
func capacityStory(prof profile) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(prof.steps[0].servers))
	for _, m := range prof.marks {
		fmt.Fprintf(&b, ", %d at %s", m.servers, time.Duration(m.at).Round(time.Second))
	}
	return b.String()
}

func adaptCell(r *result, prof profile, sc *scenario) string {
	if len(prof.marks) == 0 || r.policy.fixed == unlimited {
		return "n/a"
	}
	windows := adaptWindows(r.timeline, prof.marks, int64(sc.window), int64(sc.duration))
	cells := make([]string, len(windows))
	for i, n := range windows {
		cells[i] = "-"
		if n != adaptNever {
			cells[i] = strconv.Itoa(n)
		}
	}
	const shown = 4
	if len(cells) > shown {
		cells = append(cells[:shown], "…")
	}
	return strings.Join(cells, " ")
}

// limitShare is the clients' summed limit against the capacity, averaged over the run.
func limitShare(r *result) string {
	if r.policy.fixed == unlimited {
		return "n/a"
	}
	sum := 0.0
	for _, s := range r.timeline {
		sum += float64(s.limit) / float64(s.servers)
	}
	return strconv.FormatFloat(sum/float64(len(r.timeline)), 'f', 2, 64)
}

// percent shows a share with one decimal, and a small share that is not zero
// as "<0.1%", so that a few timeouts do not read as none.
func percent(part, whole float64) string {
	share := 0.0
	if whole > 0 {
		share = 100 * part / whole
	}
	if share > 0 && share < 0.05 {
		return "<0.1%"
	}
	return strconv.FormatFloat(share, 'f', 1, 64) + "%"
}

func millis(ns int64) string {
	return strconv.FormatFloat(float64(ns)/1e6, 'f', 1, 64)
}
