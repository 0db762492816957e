package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/resilience4cata/adaptivelimit"
)

func TestParseFlagsRejectsBadValues(t *testing.T) {
	tests := []struct {
		args []string
		want string // in the error
	}{
		{[]string{"-scenario", "bogus"}, `unknown scenario "bogus"`},
		{[]string{"-profile", "sine"}, `-profile "sine"`},
		{[]string{"-load", "0"}, "-load 0"},
		{[]string{"-load", "-1"}, "-load -1"},
		{[]string{"-load", "abc"}, "invalid value"},
		{[]string{"-load", "NaN"}, "-load NaN"},
		{[]string{"-load", "1e9"}, "-load 1e+09"},
		{[]string{"-servers", "1"}, "-servers 1"},
		{[]string{"-servers", "100000"}, "-servers 100000"},
		{[]string{"-clients", "0"}, "-clients 0"},
		{[]string{"-scenario", "fanin", "-clients", "10001"}, "-clients 10001: want 1 to 10000"},
		{[]string{"-sweep", "50,x"}, `-sweep "x": want fleet sizes 1 to 10000`},
		{[]string{"-sweep", "0"}, `-sweep "0"`},
		{[]string{"-sweep", "20000"}, `-sweep "20000"`},
		{[]string{"-sweep", ","}, "name at least one fleet size"},
		{[]string{"-sweep", "50", "-clients", "50"}, "-clients does not apply"},
		{[]string{"-sweep", "50", "-real"}, "-real does not apply"},
		{[]string{"-policies", "lossdelay,floor"}, `unknown policy "floor"`},
		{[]string{"-duration", "0s"}, "-duration 0s"},
		{[]string{"-duration", "-5s"}, "-duration -5s"},
		{[]string{"-duration", "5s"}, "at least 10 windows"},
		{[]string{"-duration", "forever"}, "invalid value"},
		{[]string{"-window", "0s"}, "-window 0s"},
		{[]string{"-window", "2h"}, "-window 2h0m0s"},
		{[]string{"-timeout", "0s"}, "-timeout 0s"},
		{[]string{"-timeout", "1m"}, "at most 10s"},
		{[]string{"-timeout", "10s", "-servers", "10000", "-duration", "1m"}, "alive at once"},
		{[]string{"-low", "0"}, "-low 0"},
		{[]string{"-high", "-3"}, "-high -3"},
		{[]string{"-initial", "-1"}, "want 0 (the default) or more"},
		{[]string{"-min", "10", "-max", "5"}, "minLimit"},
		{[]string{"-initial", "500"}, "initialLimit"},
		{[]string{"-lost", "1"}, "-lost 1"},
		{[]string{"-users", "0"}, "-users 0"},
		{[]string{"-users", "10", "-think", "-1s"}, "-think -1s"},
		{[]string{"-policies", ""}, "name at least one"},
		{[]string{"-policies", "gradient2,reno"}, `unknown policy "reno"`},
		{[]string{"-policies", "aimd,aimd"}, "listed twice"},
		{[]string{"-seed", "-1"}, "invalid value"},
		{[]string{"-out", "chart.gif"}, ".svg, .png or .pdf"},
		{[]string{"-duration", "24h", "-servers", "10000"}, "would offer"},
		{[]string{"-real", "-scenario", "closed"}, "open-loop arrivals only"},
		{[]string{"-real", "-scenario", "restart"}, "does not restart clients"},
		{[]string{"-summary", "-servers", "10"}, "-servers does not apply"},
		{[]string{"-real", "-servers", "1000"}, "more than loopback takes"},
		{[]string{"-real", "-duration", "1h"}, "at most 10m0s"},
		{[]string{"-reserve", "0.5"}, "-reserve applies to a scenario with classes only"},
		{[]string{"-byclass"}, "-byclass applies to a scenario with classes only"},
		{[]string{"-scenario", "priority", "-reserve", "1.5"}, "-reserve 1.5"},
		{[]string{"-scenario", "priority", "-reserve", "NaN"}, "-reserve NaN"},
		{[]string{"-critical", "0.5"}, "-critical applies to a scenario with classes only"},
		{[]string{"-scenario", "priority", "-critical", "0"}, "-critical 0: want more than 0, less than -load 2"},
		{[]string{"-scenario", "priority", "-critical", "2"}, "-critical 2: want more than 0, less than -load 2"},
		{[]string{"-scenario", "priority", "-critical", "NaN"}, "-critical NaN"},
		{[]string{"-scenario", "priority", "-users", "100"}, "drop -users"},
		{[]string{"-real", "-scenario", "priority"}, "-real has no classes"},
		{[]string{"-scenario", "priority", "-initial", "50", "-min", "60"}, "initialLimit"},
		{[]string{"-nosuchflag"}, "not defined"},
		{[]string{"step"}, `unexpected argument "step"`},
	}
	for _, tt := range tests {
		_, err := parseFlags(tt.args, &bytes.Buffer{})
		if err == nil {
			t.Errorf("%q: no error", tt.args)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %q, want it to contain %q", tt.args, err, tt.want)
		}
	}
}

func TestBadFlagExitsWithUsageError(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-load", "-2"}, &stdout, &stderr); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	if got := stderr.String(); !strings.HasPrefix(got, "limitsim: -load -2") {
		t.Errorf("stderr %q", got)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout %q, want nothing", stdout.String())
	}
}

func TestHelpExitsZero(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	if !strings.Contains(stderr.String(), "-scenario") {
		t.Errorf("usage does not list -scenario: %q", stderr.String())
	}
}

func TestParseFlagsAppliesFlagsOverThePreset(t *testing.T) {
	opts, err := parseFlags([]string{"-scenario", "fleet", "-seed", "9", "-clients", "3", "-policies", "aimd, none", "-window", "500ms"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	sc := opts.sc
	if sc.servers != 100 || sc.clients != 3 || sc.seed != 9 || sc.window != 500*time.Millisecond {
		t.Errorf("got servers %d, clients %d, seed %d, window %s", sc.servers, sc.clients, sc.seed, sc.window)
	}
	if len(sc.policies) != 2 || sc.policies[0].kind != "aimd" || sc.policies[1].kind != "none" {
		t.Errorf("policies %+v", sc.policies)
	}
}

func TestLimitFlagsReachTheLimiters(t *testing.T) {
	opts, err := parseFlags([]string{"-initial", "7", "-min", "3", "-max", "9", "-queue", "2", "-policies", "gradient2"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := opts.sc.policies[0].newGate(adaptivelimit.NewManualClock(), 0, &opts.sc)
	if err != nil {
		t.Fatal(err)
	}
	s := g.(limiterGate).l.Snapshot()
	if s.Limit != 7 || s.MinLimit != 3 || s.MaxLimit != 9 {
		t.Errorf("limit %d in [%d, %d], want 7 in [3, 9]", s.Limit, s.MinLimit, s.MaxLimit)
	}
}

func TestClosedLoopUsersFollowLoad(t *testing.T) {
	opts, err := parseFlags([]string{"-scenario", "closed", "-load", "1"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	// 50 servers at 10 ms, users thinking 40 ms: each sends one call per 50 ms at most.
	if opts.sc.users != 250 {
		t.Errorf("users %d, want 250", opts.sc.users)
	}
}

func TestRealScalesTheScenarioDown(t *testing.T) {
	opts, err := parseFlags([]string{"-real"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	sc := opts.sc
	if !sc.real || sc.servers != 20 || sc.low != 8 || sc.high != 60 || sc.duration != 30*time.Second {
		t.Errorf("got real %v, servers %d, low %d, high %d, duration %s", sc.real, sc.servers, sc.low, sc.high, sc.duration)
	}
	// A fleet scenario is one fleet of 8 clients at the initial limit of 20, against 20
	// workers: the limits start at 8 times the capacity.
	for _, name := range []string{"fleet", "fleet20", "fleet50"} {
		opts, err := parseFlags([]string{"-real", "-scenario", name}, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		sc := opts.sc
		if sc.servers != 20 || sc.clients != 8 || sc.timeout != 60*time.Millisecond || sc.low != 2 || sc.high != 7 {
			t.Errorf("%s: got servers %d, clients %d, timeout %s, low %d, high %d", name, sc.servers, sc.clients, sc.timeout, sc.low, sc.high)
		}
	}
	// The fanin scenario is 200 clients against the same 20 workers, LossDelay beside
	// LossDelay floored at one call in flight; -clients changes the fleet.
	for _, tt := range []struct {
		args    []string
		clients int
	}{{nil, 200}, {[]string{"-clients", "100"}, 100}} {
		opts, err := parseFlags(append([]string{"-real", "-scenario", "fanin"}, tt.args...), &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		sc := opts.sc
		if sc.servers != 20 || sc.clients != tt.clients || sc.timeout != 60*time.Millisecond || sc.duration != 20*time.Second ||
			sc.low != 1 || sc.high != 1 || strings.Join(sc.kinds, ",") != "lossdelay,"+unitFloorKind {
			t.Errorf("fanin %q: got servers %d, clients %d, timeout %s, duration %s, low %d, high %d, policies %q",
				tt.args, sc.servers, sc.clients, sc.timeout, sc.duration, sc.low, sc.high, sc.kinds)
		}
	}
}

// The fanin scenario's bulkheads follow the fleet: the fair share and three times it, at
// least one call in flight; -low and -high still set them.
func TestFaninBulkheadsFollowTheFleet(t *testing.T) {
	for _, tt := range []struct {
		args      []string
		low, high int
	}{
		{nil, 1, 1},
		{[]string{"-clients", "10"}, 5, 15},
		{[]string{"-clients", "10", "-servers", "100"}, 10, 30},
		{[]string{"-clients", "10", "-low", "3"}, 3, 15},
	} {
		opts, err := parseFlags(append([]string{"-scenario", "fanin"}, tt.args...), &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if opts.sc.low != tt.low || opts.sc.high != tt.high {
			t.Errorf("%q: low %d, high %d, want %d, %d", tt.args, opts.sc.low, opts.sc.high, tt.low, tt.high)
		}
	}
}
