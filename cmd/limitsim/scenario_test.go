package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

// target is what LossDelay must achieve in a scenario. The issues' targets are goodput at
// least 95% of the capacity, p99 at most 1.5 times the unloaded p99 over the whole run, the
// first second included, convergence within 15 windows, a poisoning ratio under 1.2 and, in
// a fleet, Jain's index of the clients' goodput at least 0.9; where no policy can reach one,
// the bound is the figure measured with seed 1, and why is said here and in
// docs/simulation.md.
type target struct {
	goodput     float64 // least share of the capacity
	p99         float64 // most p99 against the unloaded p99, over the run and after the first windows
	convergence int     // most windows
	poisoning   float64 // most
	jain        float64 // least, in a fleet
}

var issueTarget = target{goodput: 0.95, p99: 1.5, convergence: 15, poisoning: 1.2, jain: 0.9}

var scenarioTargets = map[string]target{
	"step":      issueTarget,
	"single":    issueTarget,
	"ramp":      issueTarget,
	"noisy":     issueTarget,
	"closed":    issueTarget,
	"fleet":     issueTarget,
	"fleet20":   issueTarget,
	"fleet50":   issueTarget,
	"incident":  incidentTarget,
	"shift":     issueTarget,
	"neighbour": issueTarget,
	"lossy":     issueTarget,
	"restart":   issueTarget,
}

// For the minute of the incident the capacity counts the 500 calls a second that 50 servers
// at 100 ms complete, but hardly any is answered within the 50 ms timeout: 95.2% of the
// capacity is the most any policy gets, by keeping every slot through the incident (the
// bulkhead of 150, the right size for the healthy dependency, gets 95.1%, with a p99 at the
// timeout). An adaptive limit backs off to MinLimit while its calls time out, and doubles
// back once the incident is over: about six windows below the capacity. Measured with seed
// 1: 89.0%.
var incidentTarget = func() target { t := issueTarget; t.goodput = 0.88; return t }()

// lossDelayRun runs a scenario's LossDelay policy alone; more flags, such as -clients,
// come after -scenario.
func lossDelayRun(t *testing.T, name string, flags ...string) (*result, profile, *scenario) {
	t.Helper()
	if raceDetector {
		t.Skip("millions of simulated calls take minutes under the race detector; make test runs these without it")
	}
	opts, err := parseFlags(append([]string{"-scenario", name, "-policies", "lossdelay"}, flags...), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	prof, err := opts.sc.newProfile()
	if err != nil {
		t.Fatal(err)
	}
	r, err := simulate(&opts.sc, prof, opts.sc.policies[0])
	if err != nil {
		t.Fatal(err)
	}
	return r, prof, &opts.sc
}

func TestLossDelayMeetsTheTargetsInEveryScenario(t *testing.T) {
	for name, want := range scenarioTargets {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r, prof, sc := lossDelayRun(t, name)
			capacity := prof.capacityCalls(int64(sc.duration), sc.serviceMean.Seconds(), sc.offeredLimit())
			if got := float64(r.total().completed) / capacity; got < want.goodput {
				t.Errorf("goodput %.1f%% of the capacity, want at least %.0f%%", 100*got, 100*want.goodput)
			}
			unloaded := r.unloaded.quantile(0.99)
			for _, h := range []struct {
				which string
				p99   int64
			}{{"p99", r.latency.quantile(0.99)}, {"p99 after the first windows", r.settled.quantile(0.99)}} {
				if got := float64(h.p99) / float64(unloaded); got > want.p99 {
					t.Errorf("%s %s ms, %.2f times the unloaded %s ms, want at most %g", h.which, millis(h.p99), got, millis(unloaded), want.p99)
				}
			}
			v := judge(r, prof, sc)
			if v.convergence == never || v.convergence > want.convergence {
				t.Errorf("convergence %s windows, want at most %d", windowsCell(v.convergence), want.convergence)
			}
			if !(v.poisoning < want.poisoning) {
				t.Errorf("poisoning %.2f, want under %g", v.poisoning, want.poisoning)
			}
			if sc.clients > 1 && r.jain() < want.jain {
				t.Errorf("Jain's index %.3f, want at least %g", r.jain(), want.jain)
			}
			for _, cut := range blackouts(r, prof, sc) {
				t.Error(cut)
			}
		})
	}
}

// In no scenario does a window in which a LossDelay limiter probed the no-load latency answer
// less than 84% of the calls of the window before, where the capacity was the same in both:
// fleet20 and fleet50 included, whose limiters start together at 4 and 10 times the capacity
// and lose calls before their first baseline (lossdelay.go's endStartProbe). It was 85%
// before limits below one call in flight: their deeper cut before the first baseline, which
// fan-in needs, leaves fleet50's first probe (window 3) 84.4% of the window before.
func TestLossDelayProbesCostLittle(t *testing.T) {
	for name := range scenarioTargets {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r, _, _ := lossDelayRun(t, name)
			probes := 0
			for i, s := range r.timeline {
				if !s.probed || i == 0 {
					continue
				}
				probes++
				before := r.timeline[i-1]
				if s.servers == before.servers && float64(s.answered) < 0.84*float64(before.answered) {
					t.Errorf("window %d probed and answered %d calls, after %d: %.0f%%", i, s.answered, before.answered,
						100*float64(s.answered)/float64(before.answered))
				}
			}
			if probes == 0 {
				t.Error("no window probed")
			}
		})
	}
}

// blackouts lists the windows in which a client's limit fell below half of the limit the
// window before, or of InitialLimit for a limiter's first, while the dependency was healthy:
// no call timed out, and the calls in flight did not exceed the servers left to the clients.
func blackouts(r *result, prof profile, sc *scenario) []string {
	initial, _ := sc.limits.resolved()
	before := make([]int, sc.clients)
	for i := range before {
		before[i] = initial
	}
	var cuts []string
	for i, s := range r.timeline {
		restarted := sc.restart > 0 && s.at > int64(sc.restart) && s.at-int64(sc.window) <= int64(sc.restart)
		if restarted {
			before[0] = initial
		}
		healthy := s.timeouts == 0 && s.meanIn <= prof.at(s.at-1).slots()
		for c, limit := range s.limits {
			if healthy && 2*limit < before[c] {
				cuts = append(cuts, fmt.Sprintf("window %d, client %d: the limit fell from %d to %d with a healthy dependency", i, c, before[c], limit))
			}
			before[c] = limit
		}
	}
	return cuts
}

// The tables in the README and docs/simulation.md are what the committed
// simulator prints. The documented runs take about 40 s of CPU, so plain go
// test leaves them out and make test runs them with LIMITSIM_DOCS=1.
func TestDocsShowTheSimulatorsOutput(t *testing.T) {
	if os.Getenv("LIMITSIM_DOCS") == "" {
		t.Skip("set LIMITSIM_DOCS=1 to check the documents against the simulator (make test does)")
	}
	if raceDetector {
		t.Skip("the documented runs take many minutes under the race detector")
	}
	for _, path := range []string{"README.md", "docs/simulation.md"} {
		doc, err := os.ReadFile("../../" + path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := rewriteDoc(context.Background(), doc)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, doc) {
			t.Errorf("%s is not what the simulator prints: run go run ./cmd/limitsim -docs %s", path, path)
		}
	}
}

func TestRewriteDocReplacesMarkedBlocksOnly(t *testing.T) {
	const args = "-servers 12 -duration 10s -window 500ms -chart=false -policies low"
	doc := "# t\n\n```\nuntouched\n```\n\n<!-- limitsim " + args + " -->\n```\nstale\n```\ntail\n"
	got, err := rewriteDoc(context.Background(), []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := "# t\n\n```\nuntouched\n```\n\n<!-- limitsim " + args + " -->\n```\n" + string(runOK(t, strings.Fields(args))) + "```\ntail\n"
	if string(got) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	again, err := rewriteDoc(context.Background(), got)
	if err != nil || !bytes.Equal(again, got) {
		t.Fatalf("a second rewrite changed the document (err %v)", err)
	}
	for _, bad := range []string{
		"<!-- limitsim " + args + " -->\nno fence\n",
		"<!-- limitsim " + args + " -->\n```\nnever closed\n",
		"<!-- limitsim -load 0 -->\n```\n```\n",
	} {
		if _, err := rewriteDoc(context.Background(), []byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
