package main

import (
	"fmt"
	"io"
	"strconv"

	"golang.org/x/perf/benchfmt"
)

// key names one benchmark series: its name without the -GOMAXPROCS suffix, and GOMAXPROCS
// (1 when the name has no suffix, as go test prints it).
type key struct {
	name  string
	procs int
}

func (k key) String() string {
	if k.procs == 1 {
		return k.name
	}
	return k.name + "-" + strconv.Itoa(k.procs)
}

// series holds every value read for each benchmark, by unit ("sec/op", "allocs/op", "B/op",
// as benchfmt tidies them), in the order read: the i-th value is the i-th pass's.
type series map[key]map[string][]float64

// parse reads raw go test -bench output. A malformed benchmark line is an error: a gate
// must not pass on what it could not read.
func parse(r io.Reader, fileName string, into series) error {
	br := benchfmt.NewReader(r, fileName)
	for br.Scan() {
		switch rec := br.Result().(type) {
		case *benchfmt.Result:
			k := keyOf(rec.Name)
			if into[k] == nil {
				into[k] = map[string][]float64{}
			}
			for _, v := range rec.Values {
				into[k][v.Unit] = append(into[k][v.Unit], v.Value)
			}
		case *benchfmt.SyntaxError:
			return rec
		}
	}
	return br.Err()
}

func keyOf(n benchfmt.Name) key {
	base, parts := n.Parts()
	k := key{name: string(base), procs: 1}
	for _, p := range parts {
		if p[0] == '-' {
			k.procs, _ = strconv.Atoi(string(p[1:]))
			continue
		}
		k.name += string(p)
	}
	return k
}

// passes returns k's values in unit, one per pass.
func (s series) passes(k key, unit string) ([]float64, error) {
	vs := s[k][unit]
	if len(vs) == 0 {
		return nil, fmt.Errorf("no %s for %s", unit, k)
	}
	return vs, nil
}

// paired returns num's value over den's in each pass. Both must have run in every pass: a
// ratio across passes would compare two moments of a noisy machine.
func (s series) paired(num, den key, unit string) ([]float64, error) {
	n, err := s.passes(num, unit)
	if err != nil {
		return nil, err
	}
	d, err := s.passes(den, unit)
	if err != nil {
		return nil, err
	}
	if len(n) != len(d) {
		return nil, fmt.Errorf("%s ran %d times, %s %d: passes do not pair", num, len(n), den, len(d))
	}
	rs := make([]float64, len(n))
	for i := range n {
		rs[i] = n[i] / d[i]
	}
	return rs, nil
}
