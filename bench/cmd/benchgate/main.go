// Command benchgate is the benchmarks' regression gate. It reads raw go test -bench output
// (files, or standard input), takes each benchmark's median time and largest allocation
// count, and checks the ratios measured in that run against their targets. It prints a
// table and exits 1 if any target is missed or has no figure, 2 if the input is unreadable.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	par := flag.Int("par", 2, "GOMAXPROCS of the parallel figures the targets use")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: benchgate [-par N] [bench.txt ...]")
		flag.PrintDefaults()
	}
	flag.Parse()

	s, err := read(flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchgate:", err)
		os.Exit(2)
	}
	outs := evaluate(targets(*par, s), s)
	if misses := report(os.Stdout, outs); misses > 0 {
		fmt.Fprintf(os.Stderr, "benchgate: %d of %d targets missed\n", misses, len(outs))
		os.Exit(1)
	}
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
