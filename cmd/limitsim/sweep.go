package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// runSweep simulates the scenario once for each fleet size of -sweep, and prints one row
// a size: each policy's goodput against the capacity, the share of its admitted calls that
// timed out, and Jain's index of the clients' goodput. It is docs/simulation.md's fan-in
// table.
func runSweep(opts *options, stdout io.Writer) error {
	base := opts.sc
	fmt.Fprintf(stdout, "scenario %s, seed %d: %s simulated; %d servers, capacity %s; %g× load; timeout %s\n\n",
		base.name, base.seed, base.duration, base.servers, capacityStoryOf(&base), base.load, base.timeout)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := []string{"clients", "fair share"}
	for _, p := range base.policies {
		header = append(header, sweepLabel(p))
	}
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	for _, n := range opts.sweep {
		sc := base
		sc.clients = n
		sc.fitBulkheads()
		results, capacity, err := simulateScenario(&sc)
		if err != nil {
			return err
		}
		row := []string{strconv.Itoa(n), strconv.FormatFloat(float64(sc.servers)/float64(n), 'f', 3, 64)}
		for _, r := range results {
			if r.leaked != 0 {
				return fmt.Errorf("%d clients, %s: %d slots still held after the run drained", n, r.policy.label, r.leaked)
			}
			t := r.total()
			row = append(row, percent(float64(t.completed), capacity)+", "+
				percent(float64(t.timeouts), float64(t.offered-t.rejected))+", "+
				strconv.FormatFloat(r.jain(), 'f', 2, 64))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nfair share: the nominal capacity over the clients, in calls in flight. Each cell: goodput against the capacity,\n")
	fmt.Fprintf(stdout, "the share of the admitted calls that timed out, and Jain's index of the clients' goodput (1 is equal).\n")
	return nil
}

// sweepLabel is a policy's column: a fixed bulkhead's size follows the fleet's, so its
// column names it by its rule.
func sweepLabel(p policy) string {
	switch p.kind {
	case "low":
		return "fixed low"
	case "high":
		return "fixed high"
	}
	return p.label
}

// capacityStoryOf tells the scenario's capacity over time, as the report's header does.
func capacityStoryOf(sc *scenario) string {
	prof, err := sc.newProfile()
	if err != nil {
		return strconv.Itoa(sc.servers)
	}
	return capacityStory(prof)
}
