package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

const usageHeader = `usage: limitsim [flags]

Simulates an adaptive concurrency limit in front of a dependency whose capacity
changes, beside fixed bulkheads and no limit, on the same arrivals, and prints
what each policy achieved. Scenarios:
  step    the capacity halves for the middle third of the run (the default)
  single  one client in front of a dependency of its own, at a steady capacity
  ramp    it starts at half, scales out to full and back in, one server at a time
  noisy   a neighbour now and then takes 30-60% of the servers
  closed  the step profile with closed-loop users instead of open-loop arrivals
  fleet   the step profile with 5 clients, each with its own limiter
  fleet20, fleet50
          20 or 50 clients: their initial limits add up to 4 or 10 times the capacity
  incident
          the dependency is 10 times slower for the middle third: every call times out
  shift   at low load, the dependency is twice as slow for good from a third of the run on
  neighbour
          an unlimited neighbour takes 60% of the servers for the middle third
  lossy   the step profile with 0.5% of the calls lost on the way, whatever the load
  restart a steady fleet of 10 clients, one of which restarts at its initial limit a third
          into the run
  priority
          the step profile with critical calls (25% of the capacity) and sheddable ones (175%):
          the adaptive limiters reserve part of the limit for the critical class
  fanin   the step profile with 1000 clients (-clients, up to 10000) in front of 50 servers:
          each client's fair share is below one call in flight

`

// options is what the command line asks for: a scenario, and what to do with it.
type options struct {
	sc      scenario
	out     string // chart file, .svg, .png or .pdf; empty for none
	chart   bool   // draw the limit over time in the terminal
	docs    string // a Markdown file whose marked blocks to rewrite; empty for none
	summary bool   // one row a scenario instead of one scenario's table
	byClass bool   // the per-class table only
	sweep   []int  // fleet sizes to simulate the scenario at, one row each; none for one run
}

// parseFlags reads the command line. It starts from the preset that -scenario
// names and applies every flag that was given on top, then checks the result,
// so that a bad value is an error that names the flag, never a panic later.
func parseFlags(args []string, usageOut io.Writer) (options, error) {
	fs := flag.NewFlagSet("limitsim", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned, and the usage is printed for -h only
	var (
		name     = fs.String("scenario", "step", "preset: "+strings.Join(scenarioNames, ", "))
		prof     = fs.String("profile", "", "capacity over time: "+strings.Join(profileNames, ", ")+" (default: the scenario's)")
		seed     = fs.Uint64("seed", 1, "random seed; the same seed gives the same output")
		duration = fs.Duration("duration", 0, "simulated time (default: the scenario's, 3m0s)")
		load     = fs.Float64("load", 0, "offered load as a multiple of the nominal capacity (default 2)")
		servers  = fs.Int("servers", 0, "the dependency's nominal capacity, in concurrent calls (default 50; fleet 100)")
		clients  = fs.Int("clients", 0, "clients sharing the dependency, each with its own limiter (default 1; fleet 5; fanin 1000)")
		users    = fs.Int("users", 0, "closed loop: this many users, each waiting for its answer and thinking before the next call")
		think    = fs.Duration("think", 0, "closed loop: mean think time between calls (default 40ms)")
		timeout  = fs.Duration("timeout", 0, "every call's timeout, inside the limit (default 50ms)")
		window   = fs.Duration("window", 0, "the limiters' window (default 1s)")
		low      = fs.Int("low", 0, "the low fixed bulkhead (default 20; fleet 8 per client)")
		high     = fs.Int("high", 0, "the high fixed bulkhead (default 150; fleet 60 per client)")
		initial  = fs.Int("initial", 0, "the adaptive limiters' InitialLimit (default the library's, 20)")
		minLimit = fs.Int("min", 0, "the adaptive limiters' MinLimit (default the library's, 1)")
		maxLimit = fs.Int("max", 0, "the adaptive limiters' MaxLimit (default the library's, 200)")
		queue    = fs.Int("queue", 0, "the adaptive limiters' QueueSize (default the library's, 4)")
		reserve  = fs.Float64("reserve", 0, fmt.Sprintf("with classes (-scenario priority): the critical class's reserve, a share of the limit (default %g)", priorityReserve))
		critical = fs.Float64("critical", 0, fmt.Sprintf("with classes (-scenario priority): the critical calls' offered load, a share of the nominal capacity; the sheddable calls are the rest of -load (default %g)", defaultCritical))
		byClass  = fs.Bool("byclass", false, "with classes: print the scenario and the per-class table only")
		lost     = fs.Float64("lost", 0, "share of the calls lost on the way, each timing out whatever the load (default 0; lossy 0.005)")
		policies = fs.String("policies", strings.Join(policyKinds, ","), "policies to compare, comma-separated, of these and lossdelay-floor1 (LossDelay floored at one call in flight); fanin: all but high")
		out      = fs.String("out", "", "write the charts to this file: .svg, .png or .pdf")
		chart    = fs.Bool("chart", true, "draw the limits over time in the terminal")
		realTime = fs.Bool("real", false, "run against a real HTTP server on loopback for about 30s instead of simulating, and print each second's goodput; with -scenario single, 20s at a steady capacity; with -scenario fleet, 20s of a fleet of 8 clients against 20 workers; with -scenario fanin, 20s of 200 clients (-clients) against 20 workers, LossDelay then lossdelay-floor1")
		summary  = fs.Bool("summary", false, "simulate every scenario with the adaptive policies (or -policies) and print one row a scenario; only -seed and -policies apply")
		sweep    = fs.String("sweep", "", "simulate the scenario once for each of these fleet sizes (-clients), comma-separated, and print one row each: goodput, timeouts and Jain's index")
		docs     = fs.String("docs", "", "rewrite the output blocks of this Markdown file, each after a line <!-- limitsim ARGS -->, with what limitsim ARGS prints, and do nothing else")
	)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(usageOut)
			fmt.Fprint(usageOut, usageHeader)
			fs.PrintDefaults()
		}
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected argument %q: every setting is a flag (see -h)", fs.Arg(0))
	}
	sc, err := preset(*name)
	if err != nil {
		return options{}, fmt.Errorf("-scenario: %w", err)
	}
	if *realTime {
		sc.toReal()
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["profile"] {
		sc.profile = *prof
	}
	sc.seed = *seed
	override(set, "duration", &sc.duration, *duration)
	override(set, "load", &sc.load, *load)
	override(set, "servers", &sc.servers, *servers)
	override(set, "clients", &sc.clients, *clients)
	override(set, "think", &sc.think, *think)
	override(set, "timeout", &sc.timeout, *timeout)
	override(set, "window", &sc.window, *window)
	sc.fitBulkheads()
	override(set, "low", &sc.low, *low)
	override(set, "high", &sc.high, *high)
	override(set, "initial", &sc.limits.initial, *initial)
	override(set, "min", &sc.limits.min, *minLimit)
	override(set, "max", &sc.limits.max, *maxLimit)
	override(set, "queue", &sc.limits.queue, *queue)
	override(set, "lost", &sc.lost, *lost)
	if set["reserve"] && len(sc.classes) > 0 {
		sc.classes[0].reserve = *reserve
	}
	override(set, "critical", &sc.critical, *critical)
	if len(sc.classes) > 0 {
		sc.classes[0].share = sc.critical / sc.load
		sc.classes[1].share = 1 - sc.classes[0].share
	}
	if set["policies"] {
		sc.kinds = splitList(*policies)
	}
	if *summary {
		for name := range set {
			if name != "summary" && name != "seed" && name != "policies" && name != "chart" {
				return options{}, fmt.Errorf("-summary runs every scenario as it is: -%s does not apply (only -seed and -policies do)", name)
			}
		}
		if !set["policies"] {
			sc.kinds = summaryKinds
		}
	}
	if set["users"] {
		sc.users = *users
		if sc.think == 0 {
			sc.think = 40 * time.Millisecond
		}
	}
	sizes, err := parseSweep(*sweep, set)
	if err != nil {
		return options{}, err
	}
	if err := validate(&sc, set); err != nil {
		return options{}, err
	}
	if sc.users > 0 && !set["users"] {
		sc.users = sc.closedUsers()
	}
	if err := sc.buildPolicies(); err != nil {
		return options{}, fmt.Errorf("-policies: %w", err)
	}
	if *out != "" && !slices.Contains([]string{".svg", ".png", ".pdf"}, strings.ToLower(filepath.Ext(*out))) {
		return options{}, fmt.Errorf("-out %q: the file name must end in .svg, .png or .pdf", *out)
	}
	return options{sc: sc, out: *out, chart: *chart, docs: *docs, summary: *summary, byClass: *byClass, sweep: sizes}, nil
}

// parseSweep reads -sweep: fleet sizes, each 1 to maxClients, for a simulated run that sets
// -clients itself.
func parseSweep(s string, set map[string]bool) ([]int, error) {
	if !set["sweep"] {
		return nil, nil
	}
	var errs []error
	for _, name := range []string{"clients", "real", "summary", "out", "byclass"} {
		if set[name] {
			errs = append(errs, fmt.Errorf("-sweep prints one row a fleet size: -%s does not apply", name))
		}
	}
	var sizes []int
	for _, part := range splitList(s) {
		n, err := strconv.Atoi(part)
		if err != nil || n < 1 || n > maxClients {
			errs = append(errs, fmt.Errorf("-sweep %q: want fleet sizes 1 to %d, comma-separated", part, maxClients))
			continue
		}
		sizes = append(sizes, n)
	}
	if len(sizes) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("-sweep %q: name at least one fleet size, 1 to %d", s, maxClients))
	}
	return sizes, errors.Join(errs...)
}

func override[T any](set map[string]bool, name string, field *T, value T) {
	if set[name] {
		*field = value
	}
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// Bounds that keep a run meaningful and within a few minutes of CPU.
const (
	maxServers   = 10_000
	maxClients   = 10_000
	maxLoad      = 20
	maxDuration  = 24 * time.Hour
	maxCallCount = 2e9 // calls a run may offer, over all policies
	maxAlive     = 2e6 // calls alive at once: offered per second times the timeout
	maxTimeout   = 10 * time.Second
	maxRealRate  = 20_000 // calls per second the real mode may send, over all policies
	maxRealTime  = 10 * time.Minute
)

func validate(sc *scenario, set map[string]bool) error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(slices.Contains(profileNames, sc.profile), "-profile %q: want one of %s", sc.profile, strings.Join(profileNames, ", "))
	check(sc.servers >= 2 && sc.servers <= maxServers, "-servers %d: want 2 to %d (the step and ramp profiles halve it)", sc.servers, maxServers)
	check(sc.clients >= 1 && sc.clients <= maxClients, "-clients %d: want 1 to %d", sc.clients, maxClients)
	check(sc.load > 0 && sc.load <= maxLoad, "-load %g: want more than 0, at most %d", sc.load, maxLoad)
	check(sc.window >= time.Millisecond && sc.window <= time.Hour, "-window %s: want 1ms to 1h", sc.window)
	check(sc.duration > 0 && sc.duration <= maxDuration, "-duration %s: want more than 0, at most %s", sc.duration, maxDuration)
	check(sc.duration >= 10*sc.window, "-duration %s: want at least 10 windows (-window %s)", sc.duration, sc.window)
	check(sc.timeout > 0 && sc.timeout <= maxTimeout, "-timeout %s: want more than 0, at most %s", sc.timeout, maxTimeout)
	check(sc.low >= 1, "-low %d: want at least 1", sc.low)
	check(sc.high >= 1, "-high %d: want at least 1", sc.high)
	check(sc.lost >= 0 && sc.lost < 1, "-lost %g: want 0 or more, less than 1", sc.lost)
	classed := len(sc.classes) > 0
	check(!set["reserve"] || classed, "-reserve applies to a scenario with classes only (-scenario priority)")
	check(!set["byclass"] || classed, "-byclass applies to a scenario with classes only (-scenario priority)")
	check(!set["critical"] || classed, "-critical applies to a scenario with classes only (-scenario priority)")
	if classed {
		check(sc.classes[0].reserve >= 0 && sc.classes[0].reserve <= 1, "-reserve %g: want 0 to 1", sc.classes[0].reserve)
		check(sc.critical > 0 && sc.critical < sc.load, "-critical %g: want more than 0, less than -load %g", sc.critical, sc.load)
		check(sc.users == 0, "the classes' calls are open-loop arrivals: drop -users")
		check(!sc.real, "-real has no classes: drop -scenario priority")
	}
	if err := sc.limits.check(); err != nil {
		errs = append(errs, err)
	}
	check(len(sc.kinds) > 0, "-policies: name at least one of %s", strings.Join(policyKinds, ","))
	if set["users"] || sc.users > 0 {
		check(sc.users >= 1 && sc.users <= 1_000_000, "-users %d: want 1 to 1000000", sc.users)
		check(sc.think > 0, "-think %s: want more than 0", sc.think)
	}
	for i, k := range sc.kinds {
		check(!slices.Contains(sc.kinds[:i], k), "-policies: %q is listed twice", k)
	}
	if sc.real {
		check(sc.users == 0, "-real sends open-loop arrivals only: drop -users and -scenario closed")
		check(sc.restart == 0, "-real does not restart clients: drop -scenario restart")
		check(sc.duration <= maxRealTime, "-real -duration %s: want at most %s", sc.duration, maxRealTime)
		rate := sc.offeredRate() // a fleet's policies run one after the other (real.go)
		if sc.clients == 1 {
			rate *= float64(len(sc.kinds))
		}
		check(rate <= maxRealRate, "-real would send %.0f calls/s over all policies, more than loopback takes without distorting latency (at most %d): lower -load, -servers or -policies", rate, maxRealRate)
	}
	if len(errs) == 0 {
		calls := sc.offeredRate() * sc.duration.Seconds() * float64(len(sc.kinds))
		check(calls <= maxCallCount, "the run would offer %.3g calls; lower -duration, -load or -servers (at most %.0g)", calls, float64(maxCallCount))
		alive := sc.offeredRate() * sc.timeout.Seconds()
		check(alive <= maxAlive, "the run would keep %.3g calls alive at once (calls per second times -timeout); lower -timeout, -load or -servers (at most %.0g)", alive, float64(maxAlive))
	}
	return errors.Join(errs...)
}
