package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// summaryKinds are the policies -summary compares unless -policies names others.
var summaryKinds = []string{"gradient2", "aimd", "vegas", "lossdelay"}

// runSummary simulates every preset scenario with the chosen policies and seed, and prints
// one row a scenario: each policy's goodput against the capacity, its p99 and, in a fleet,
// Jain's index of the clients' goodput. It is the README's table of which algorithm to use.
func runSummary(opts *options, stdout io.Writer) error {
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := []string{"scenario", "unloaded p99"}
	for _, kind := range opts.sc.kinds {
		p, err := newPolicy(kind, &opts.sc)
		if err != nil {
			return err
		}
		header = append(header, p.label)
	}
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	for _, name := range scenarioNames {
		sc, err := preset(name)
		if err != nil {
			return err
		}
		if len(sc.classes) > 0 {
			continue // a table per class, which one cell cannot hold: -scenario priority
		}
		if name == "fanin" {
			continue // a row a fleet size, -sweep's table: docs/simulation.md
		}
		sc.seed, sc.kinds = opts.sc.seed, opts.sc.kinds
		results, capacity, err := simulateScenario(&sc)
		if err != nil {
			return err
		}
		row := []string{name, millis(unloadedP99(results)) + " ms"}
		for _, r := range results {
			cell := percent(float64(r.total().completed), capacity) + ", " + millis(r.latency.quantile(0.99)) + " ms"
			if sc.clients > 1 {
				cell += ", Jain " + strconv.FormatFloat(r.jain(), 'f', 2, 64)
			}
			row = append(row, cell)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nEach cell: goodput against the capacity, p99 latency over the whole run (a timed-out call counting as its timeout)")
	fmt.Fprintf(stdout, ",\nand in a fleet Jain's index of the clients' goodput (1 is equal). Seed %d; -scenario NAME shows one in full.\n", opts.sc.seed)
	return nil
}

// simulateScenario builds the scenario's policies and profile and runs every policy, and
// returns the results with the calls the capacity could have answered over the run.
func simulateScenario(sc *scenario) ([]*result, float64, error) {
	sc.policies = nil // a copy's own, not the original's
	if err := sc.buildPolicies(); err != nil {
		return nil, 0, err
	}
	prof, err := sc.newProfile()
	if err != nil {
		return nil, 0, err
	}
	results, err := simulateAll(sc, prof)
	if err != nil {
		return nil, 0, err
	}
	return results, prof.capacityCalls(int64(sc.duration), sc.serviceMean.Seconds(), sc.offeredLimit()), nil
}
