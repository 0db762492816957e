// Command limitsim shows an adaptive concurrency limit finding a dependency's
// capacity, backing off when the capacity drops and recovering when it
// returns, beside fixed bulkheads and no limit at all.
//
// By default it simulates: a deterministic discrete-event simulation drives
// the real adaptivelimit.Limiter on a ManualClock, so a run takes seconds and
// the same seed gives the same output. With -real it runs a shorter version of
// the same scenario in real time against an HTTP server on loopback.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole command, with exit status 0 on success, 1 when the run
// fails and 2 for a bad command line.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) { // the usage has been printed: no failure
		return 0
	}
	if err != nil {
		for line := range strings.Lines(err.Error()) {
			fmt.Fprintf(stderr, "limitsim: %s", strings.TrimSuffix(line, "\n")+"\n")
		}
		fmt.Fprintln(stderr, "limitsim: run limitsim -h for the flags")
		return 2
	}
	switch {
	case opts.docs != "":
		err = rewriteDocFile(ctx, opts.docs)
	case len(opts.sweep) > 0:
		err = runSweep(&opts, stdout)
	case opts.summary:
		err = runSummary(&opts, stdout)
	case opts.sc.real:
		err = runReal(ctx, &opts, stdout, stderr)
	default:
		err = runSimulated(&opts, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "limitsim: %v\n", err)
		return 1
	}
	return 0
}

func runSimulated(opts *options, stdout io.Writer) error {
	sc := &opts.sc
	prof, err := sc.newProfile()
	if err != nil {
		return err
	}
	results, err := simulateAll(sc, prof)
	if err != nil {
		return err
	}
	for _, r := range results {
		if r.leaked != 0 {
			return fmt.Errorf("%s: %d slots still held after the run drained", r.policy.label, r.leaked)
		}
	}
	return report(opts, prof, results, stdout)
}

// report prints the table and the terminal chart, and writes the chart file.
func report(opts *options, prof profile, results []*result, stdout io.Writer) error {
	if opts.byClass { // the per-class table alone, for the README
		describe(stdout, &opts.sc, prof, results)
		return writeClassReport(stdout, &opts.sc, prof, results)
	}
	if err := writeReport(stdout, &opts.sc, prof, results); err != nil {
		return err
	}
	if opts.sc.real {
		if err := writeSeconds(stdout, &opts.sc, prof, results); err != nil {
			return err
		}
	}
	if opts.chart {
		writeTerminalChart(stdout, &opts.sc, results)
	}
	if opts.out != "" {
		if err := writePlot(opts.out, &opts.sc, prof, results); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nwrote %s\n", opts.out)
	}
	return nil
}
