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

func TestParseSplitsGOMAXPROCS(t *testing.T) {
	s := readTestdata(t, "pass.txt")
	for _, tc := range []struct {
		k    key
		want float64
	}{
		{key{"Admit/alg=gradient2/clock=ticks", 1}, 21e-9},
		{key{"Admit/alg=gradient2/clock=ticks", 2}, 39e-9},
		{key{"Floor/clock=nanotime/reads=1", 2}, 45e-9},
	} {
		got, err := s.stat(tc.k, "sec/op")
		if err != nil || !near(got, tc.want) {
			t.Errorf("median %s = %g, %v; want %g", tc.k, got, err, tc.want)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %g, want %g", tc.in, got, tc.want)
		}
	}
}

func TestGatePasses(t *testing.T) {
	s := readTestdata(t, "pass.txt")
	outs := evaluate(targets(2, s), s)
	if misses := report(io.Discard, outs); misses != 0 {
		var b strings.Builder
		report(&b, outs)
		t.Fatalf("%d misses on passing input:\n%s", misses, b.String())
	}
	if got := outs[0].value; !near(got, 21.0/20) {
		t.Errorf("first ratio = %g, want %g", got, 21.0/20)
	}
}

func TestGateMisses(t *testing.T) {
	s := readTestdata(t, "fail.txt")
	var missed []string
	for _, o := range evaluate(targets(2, s), s) {
		if !o.ok() {
			missed = append(missed, o.target.String()+" "+o.unit)
		}
	}
	want := []string{
		"Admit/alg=gradient2/clock=ticks / Floor/clock=ticks/reads=2 sec/op", // 1.25x
		"Reject/impl=adaptivelimit sec/op",                                   // 3 ns
		"WindowClose/alg=gradient2 allocs/op",                                // 1 alloc
		"Peer/peer=failsafe-2 / Admit/alg=gradient2/clock=default-2 sec/op",  // missing
	}
	if !slices.Equal(missed, want) {
		t.Errorf("missed:\n%s\nwant:\n%s", strings.Join(missed, "\n"), strings.Join(want, "\n"))
	}
}

func TestMissingFamilyIsAMiss(t *testing.T) {
	outs := evaluate(allocTargets(series{}), series{})
	if len(outs) != len(zeroAllocFamilies) {
		t.Fatalf("%d targets, want one per family", len(outs))
	}
	for _, o := range outs {
		if o.err == nil {
			t.Errorf("%s: no error without results", o.target)
		}
	}
}

func TestMalformedLineIsAnError(t *testing.T) {
	in := "BenchmarkAdmit/alg=aimd/clock=ticks 1000 abc ns/op\n"
	if err := parse(strings.NewReader(in), "in", series{}); err == nil {
		t.Fatal("no error for a malformed result line")
	}
}
