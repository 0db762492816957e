package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// writeReport prints what the scenario was and one table row per policy.
func writeReport(w io.Writer, sc *scenario, prof profile, results []*result) error {
	describe(w, sc, prof, results)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "policy\tgoodput/s\tof capacity\tp50 ms\tp99 ms\trejected\ttimeouts\tadapt (windows)\t"
	if sc.clients > 1 {
		header += "Σlimit/capacity\tJain\t"
	}
	header += "converge\tpoisoning\tlimit CV\trecover\t"
	fmt.Fprintln(tw, header)
	capacityCalls := prof.capacityCalls(int64(sc.duration), sc.serviceMean.Seconds(), sc.offeredLimit())
	for _, r := range results {
		t := r.total()
		admitted := t.offered - t.rejected
		v := judge(r, prof, sc)
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
		row = append(row, windowsCell(v.convergence), ratioCell(v.poisoning), ratioCell(v.limitCV), windowsCell(v.recovery))
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\ngoodput: calls answered within the timeout; of capacity: against what the servers could complete (servers / mean service time), or the offered load where lower.\n")
	fmt.Fprintf(w, "p50, p99: latency of admitted calls, a timed-out call counting as its timeout; rejected: share of offered calls; timeouts: share of admitted calls.\n")
	fmt.Fprintf(w, "adapt: windows after each marked capacity change until the limit stays within %g-%g× the new capacity for %d windows (- never).\n",
		adaptLow, adaptHigh, adaptHold)
	if sc.clients > 1 {
		fmt.Fprintf(w, "Σlimit/capacity: the clients' limits added up, against the capacity, averaged over the windows; Jain: fairness of the clients' goodput (1 is equal).\n")
	}
	fmt.Fprintf(w, "converge: windows until the calls in flight stay within %g× the capacity with under %g%% of a window's calls timing out, up to the first change (- never).\n",
		convergedInFlight, 100*convergedTimeouts)
	fmt.Fprintf(w, "poisoning: the latency the limiters take as normal against the true no-load latency, at its worst (1 is right).\n")
	fmt.Fprintf(w, "limit CV: the limit's standard deviation over its mean, from window %d to the first change.\n", steadyFrom)
	fmt.Fprintf(w, "recover: windows after the incident ends until a window's goodput is %g%% of the last %d windows' before it began (- never).\n",
		100*recoveredShare, recoveryBase)
	if len(sc.classes) > 0 {
		fmt.Fprintln(w)
	}
	return writeClassReport(w, sc, prof, results)
}

func describe(w io.Writer, sc *scenario, prof profile, results []*result) {
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
	if sc.restart > 0 {
		fleet += fmt.Sprintf("; client 0 restarts at %s, its limiter again at the initial limit", sc.restart)
	}
	lost := ""
	if sc.lost > 0 {
		lost = fmt.Sprintf(", and %g%% of the calls are lost on the way and time out whatever the load", 100*sc.lost)
	}
	fmt.Fprintf(w, "load: %s; %s; every call times out after %s%s\n", load, fleet, sc.timeout, lost)
	fmt.Fprintf(w, "unloaded p99: %s ms (the offered calls' service times, capped at the timeout)\n\n", millis(unloadedP99(results)))
}

// unloadedP99 is the p99 latency the calls would have had with no queue. Open-
// loop arrivals are the same under every policy; a closed loop's are not, so it
// takes the first policy's.
func unloadedP99(results []*result) int64 {
	if len(results) == 0 {
		return 0
	}
	return results[0].unloaded.quantile(0.99)
}

// capacityStory tells the capacity's marked changes, as "50, 25 at 1m0s, 50 at 2m0s".
func capacityStory(prof profile) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(prof.steps[0].servers))
	for _, m := range prof.marks {
		at := time.Duration(m.at).Round(time.Second)
		if before := prof.at(m.at - 1); before.servers == m.servers && before.slow == m.slow && before.neighbour == m.neighbour {
			continue // not a change of capacity: a restart
		}
		switch {
		case m.slow != 1:
			fmt.Fprintf(&b, ", %g× slower at %s", m.slow, at)
		case m.neighbour > 0:
			fmt.Fprintf(&b, ", %g%% taken by an unlimited neighbour at %s", 100*m.neighbour, at)
		default:
			fmt.Fprintf(&b, ", %d at %s", m.servers, at)
		}
	}
	return b.String()
}

func windowsCell(n int) string {
	switch n {
	case never:
		return "-"
	case notApplicable:
		return "n/a"
	}
	return strconv.Itoa(n)
}

func ratioCell(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
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
		sum += s.exact / float64(s.servers)
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
