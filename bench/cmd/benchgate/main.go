// Command benchgate is the benchmarks' regression gate. It reads raw go test -bench output
// (files, or standard input) of several passes, each running every benchmark once, and
// checks each target's ratio pass by pass: a target misses when its median ratio is beyond
// the bound and a one-sided sign test over the passes gives p < 0.05; a median beyond the
// bound without that is unclear. Allocation counts must be 0 in every pass. It prints a
// table and exits 1 if any target is missed or has no figure, 2 if the input is unreadable.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
)

func main() {
	par := flag.Int("par", 2, "GOMAXPROCS of the parallel figures the targets use")
	cpuList := flag.String("cpus", "1,2,8,64", "every GOMAXPROCS at which the overload and one-goroutine targets hold")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: benchgate [-par N] [-cpus N,M,...] [bench.txt ...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	cpus, err := parseCPUs(*cpuList)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchgate:", err)
		os.Exit(2)
	}

	s, err := read(flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchgate:", err)
		os.Exit(2)
	}
	outs := evaluate(targets(*par, cpus, s), s)
	failed := report(os.Stdout, outs)
	fmt.Println(summary(outs, failed))
	if failed > 0 {
		os.Exit(1)
	}
}

// parseCPUs reads a -cpu style list: positive GOMAXPROCS values, comma-separated.
func parseCPUs(list string) ([]int, error) {
	var cpus []int
	for f := range strings.SplitSeq(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-cpus %q: %q is not a positive GOMAXPROCS", list, f)
		}
		cpus = append(cpus, n)
	}
	return cpus, nil
}

func read(files []string) (series, error) {
	s := series{}
	if len(files) == 0 {
		return s, parse(os.Stdin, "stdin", s)
	}
	for _, name := range files {
		if err := readFile(name, s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func readFile(name string, into series) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	return parse(f, name, into)
}
