package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	write := flag.Bool("w", false, "write the listings instead of checking them")
	dir := flag.String("dir", "api", "the directory of the listings, relative to the repository root")
	unpublished := flag.String("unpublished", "", "the module directories that are never tagged, separated by spaces")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: api [-w] [-dir api] [-unpublished 'dir ...'] core-dir [module-dir ...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	ok, err := run(flag.Args(), strings.Fields(*unpublished), *dir, *write, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "api:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// run writes or checks the listing of each published module of dirs, and reports whether
// every listing matched, printing what differs to out.
func run(dirs, unpublished []string, apiDir string, write bool, out io.Writer) (bool, error) {
	failed := false
	for _, m := range dirs {
		if isListed(m, unpublished) {
			continue
		}
		ok, err := module(m, apiDir, write, out)
		if err != nil {
			return false, err
		}
		failed = failed || !ok
	}
	if failed {
		fmt.Fprintf(out, "api-check: the exported API is not the one listed under %s/. If the change is meant, run `make api` and commit %s/ with it.\n", apiDir, apiDir)
	}
	return !failed, nil
}

// isListed reports whether dir is one of dirs, ./x and x alike.
func isListed(dir string, dirs []string) bool {
	for _, d := range dirs {
		if strings.TrimPrefix(d, "./") == strings.TrimPrefix(dir, "./") {
			return true
		}
	}
	return false
}
