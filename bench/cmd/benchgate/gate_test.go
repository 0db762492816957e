package main

import (
	"io"
	"math"
	"slices"
	"strings"
	"testing"
)

func readTestdata(t *testing.T, name string) series {
	t.Helper()
	s, err := read([]string{"testdata/" + name})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// near allows for ns/op read as seconds.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }

func TestParseKeepsPassesInOrder(t *testing.T) {
	s := readTestdata(t, "pass.txt")
	got, err := s.passes(key{"Floor/clock=ticks/reads=2", 1}, "sec/op")
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{20, 21.6, 19.4, 26, 20.4, 19, 23, 20, 21, 19.8}
	if len(got) != len(want) {
		t.Fatalf("%d passes, want %d", len(got), len(want))
	}
	for i := range want {
		if !near(got[i], want[i]*1e-9) {
			t.Errorf("pass %d = %g s/op, want %g ns/op", i, got[i], want[i])
		}
	}
	if _, err := s.passes(key{"Floor/clock=ticks/reads=2", 2}, "sec/op"); err != nil {
		t.Errorf("the -2 suffix is not read as GOMAXPROCS: %v", err)
	}
}

func TestQuantile(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		q    float64
		want float64
	}{
		{[]float64{3}, 0.5, 3},
		{[]float64{5, 1, 3}, 0.5, 3},
		{[]float64{4, 1, 3, 2}, 0.5, 2.5},
		{[]float64{4, 1, 3, 2}, 0, 1},
		{[]float64{4, 1, 3, 2}, 1, 4},
		{[]float64{10, 0, 30, 20, 40, 50, 60, 70, 80, 90}, 0.025, 2.25},
		{[]float64{10, 0, 30, 20, 40, 50, 60, 70, 80, 90}, 0.975, 87.75},
	} {
		if got := quantile(tc.in, tc.q); !near(got, tc.want) {
			t.Errorf("quantile(%v, %g) = %g, want %g", tc.in, tc.q, got, tc.want)
		}
	}
}

// The exact binomial tail: at least k heads in n fair tosses.
func TestSignTest(t *testing.T) {
	for _, tc := range []struct {
		k, n int
		want float64
	}{
		{10, 10, 1.0 / 1024},
		{9, 10, 11.0 / 1024},
		{8, 10, 56.0 / 1024},
		{5, 10, 638.0 / 1024},
		{0, 10, 1},
		{5, 5, 1.0 / 32},
		{3, 3, 1.0 / 8},
		{20, 30, 0.04936857335269451},
	} {
		if got := signTest(tc.k, tc.n); !near(got, tc.want) {
			t.Errorf("signTest(%d, %d) = %g, want %g", tc.k, tc.n, got, tc.want)
		}
	}
	// With 10 passes, 9 beyond the bound is significant and 8 is not.
	if signTest(9, 10) >= alpha || signTest(8, 10) < alpha {
		t.Errorf("with 10 passes the threshold is not 9")
	}
}

// synthetic builds a series of num and den whose paired ratios are ratios, den 10 ns in
// every pass but scaled by a different noise factor in each, as a noisy machine does.
func synthetic(ratios ...float64) (series, target) {
	num, den := key{"Admit", 1}, key{"Floor", 1}
	s := series{num: {"sec/op": nil}, den: {"sec/op": nil}}
	for i, r := range ratios {
		d := 10e-9 * (1 + 0.1*float64(i%3))
		s[den]["sec/op"] = append(s[den]["sec/op"], d)
		s[num]["sec/op"] = append(s[num]["sec/op"], d*r)
	}
	return s, target{unit: "sec/op", num: num, den: den, atMost: true, bound: 1.10}
}

func TestVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ratios []float64
		want   verdict
		beyond int
	}{
		{"all within", []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, ok, 0},
		{"median within, 4 beyond", []float64{1.3, 1.3, 1.3, 1.3, 1, 1, 1, 1, 1, 1.1}, ok, 4},
		{"median beyond, 7 of 10", []float64{1.2, 1.2, 1.2, 1.2, 1.2, 1.2, 1.2, 1, 1, 1}, unclear, 7},
		{"median beyond, 8 of 10", []float64{1.2, 1.2, 1.2, 1.2, 1.2, 1.2, 1.2, 1.2, 1, 1}, unclear, 8},
		{"9 of 10 beyond", []float64{1.2, 1.2, 1.2, 1.2, 1.2, 1.2, 1.2, 1.2, 1.2, 1}, miss, 9},
		{"all beyond", []float64{2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, miss, 10},
		{"3 passes all beyond", []float64{2, 2, 2}, unclear, 3},
		{"5 passes all beyond", []float64{2, 2, 2, 2, 2}, miss, 5},
		{"on the bound is within", []float64{1.1, 1.1, 1.1, 1.1, 1.1}, ok, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, tg := synthetic(tc.ratios...)
			o := tg.judge(s)
			if o.verdict != tc.want || o.beyond != tc.beyond || o.passes != len(tc.ratios) {
				t.Errorf("%v with %d/%d beyond, want %v with %d/%d",
					o.verdict, o.beyond, o.passes, tc.want, tc.beyond, len(tc.ratios))
			}
			if want := median(tc.ratios); !near(o.value, want) {
				t.Errorf("median %g, want %g", o.value, want)
			}
		})
	}
}

// A ratio is taken within each pass: a pass that is slow for both benchmarks does not
// move it, where the ratio of the two medians would.
func TestRatiosArePaired(t *testing.T) {
	num, den := key{"Admit", 1}, key{"Floor", 1}
	s := series{
		num: {"sec/op": {10, 20, 40, 80, 160}},
		den: {"sec/op": {10, 20, 40, 80, 160}},
	}
	tg := target{unit: "sec/op", num: num, den: den, atMost: true, bound: 1}
	if o := tg.judge(s); o.verdict != ok || o.value != 1 || o.lo != 1 || o.hi != 1 {
		t.Errorf("equal benchmarks: %v, median %g, range %g-%g; want ok, 1, 1-1", o.verdict, o.value, o.lo, o.hi)
	}
	s[den]["sec/op"] = s[den]["sec/op"][:4]
	if o := tg.judge(s); o.verdict != missing {
		t.Errorf("a benchmark missing from a pass: %v, want %v", o.verdict, missing)
	}
}

func TestGatePasses(t *testing.T) {
	s := readTestdata(t, "pass.txt")
	outs := evaluate(targets(2, []int{1, 2}, s), s)
	if failed := report(io.Discard, outs); failed != 0 {
		var b strings.Builder
		report(&b, outs)
		t.Fatalf("%d failed on passing input:\n%s", failed, b.String())
	}
	if o := outs[0]; !near(o.value, 1.05) || o.beyond != 2 || !near(o.hi, 1.2) {
		t.Errorf("first target: median %g, %d beyond, top %g; want 1.05, 2, 1.2", o.value, o.beyond, o.hi)
	}
}

func TestGateMisses(t *testing.T) {
	s := readTestdata(t, "fail.txt")
	got := map[verdict][]string{}
	for _, o := range evaluate(targets(2, []int{1, 2}, s), s) {
		got[o.verdict] = append(got[o.verdict], o.target.String()+" "+o.unit)
	}
	for v, want := range map[verdict][]string{
		miss: {
			"Admit/alg=gradient2/clock=ticks / Floor/clock=ticks/reads=2 sec/op",         // 10/10 at 1.25x
			"Reject/impl=adaptivelimit / Reject/impl=floor sec/op",                       // 9/10 at 3x
			"Admit/alg=gradient2/clock=ticks-2 / Admit/alg=gradient2/clock=ticks sec/op", // 10/10 at 1.57x
			"WindowClose/alg=gradient2 allocs/op",                                        // 1 alloc in one pass
		},
		unclear: {
			"Admit/alg=gradient2/clock=nanotime / Floor/clock=nanotime/reads=2 sec/op", // 7/10
			"Admit/alg=aimd/clock=ticks-2 / Floor/clock=ticks/reads=1-2 sec/op",        // 8/10
		},
		missing: {
			"Peer/peer=failsafe-2 / Admit/alg=gradient2/clock=default-2 sec/op",
		},
	} {
		if !slices.Equal(got[v], want) {
			t.Errorf("%v:\n%s\nwant:\n%s", v, strings.Join(got[v], "\n"), strings.Join(want, "\n"))
		}
	}
	if failed := report(io.Discard, evaluate(targets(2, []int{1, 2}, s), s)); failed != 5 {
		t.Errorf("%d failed, want 5: unclear targets do not fail the gate", failed)
	}
}

func TestMissingFamilyIsMissing(t *testing.T) {
	outs := evaluate(allocTargets(series{}), series{})
	if len(outs) != len(zeroAllocFamilies) {
		t.Fatalf("%d targets, want one per family", len(outs))
	}
	for _, o := range outs {
		if o.verdict != missing {
			t.Errorf("%s: %v without results, want %v", o.target, o.verdict, missing)
		}
	}
}

func TestMalformedLineIsAnError(t *testing.T) {
	in := "BenchmarkAdmit/alg=aimd/clock=ticks 1000 abc ns/op\n"
	if err := parse(strings.NewReader(in), "in", series{}); err == nil {
		t.Fatal("no error for a malformed result line")
	}
}

func TestSummaryWarnsOfTooFewPasses(t *testing.T) {
	s, tg := synthetic(2, 2, 2)
	if got := summary(evaluate([]target{tg}, s), 0); !strings.Contains(got, "no ratio can miss") {
		t.Errorf("3 passes: %q does not warn", got)
	}
	s, tg = synthetic(2, 2, 2, 2, 2)
	if got := summary(evaluate([]target{tg}, s), 1); strings.Contains(got, "no ratio can miss") {
		t.Errorf("5 passes: %q warns", got)
	}
}
