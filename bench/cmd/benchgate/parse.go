package main

import (
	"fmt"
	"io"
	"slices"
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
// as benchfmt tidies them).
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

// stat summarises one series in one unit: the median of times, and the largest allocation
// count, since a single allocating run is an allocation.
func (s series) stat(k key, unit string) (float64, error) {
	vs := s[k][unit]
	if len(vs) == 0 {
		return 0, fmt.Errorf("no %s for %s", unit, k)
	}
	if unit == "allocs/op" {
		return slices.Max(vs), nil
	}
	return median(vs), nil
}

func median(vs []float64) float64 {
	vs = slices.Sorted(slices.Values(vs))
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}
