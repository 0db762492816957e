package main

import (
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// module writes or checks the listing of the module in dir; it reports whether the listing
// matched (always, when written), printing each line that differs to out.
func module(dir, apiDir string, write bool, out io.Writer) (bool, error) {
	modPath, pkgs, err := load(dir)
	if err != nil {
		return false, err
	}
	var lines []string
	for _, p := range pkgs {
		lines = append(lines, features(p)...)
	}
	slices.Sort(lines)
	file := filepath.Join(apiDir, path.Base(modPath)+".txt")
	got := strings.Join(lines, "\n") + "\n"
	if write {
		if err := os.MkdirAll(apiDir, 0o755); err != nil {
			return false, err
		}
		return true, os.WriteFile(file, []byte(got), 0o644)
	}
	data, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		return false, err
	}
	added, removed := diff(strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"), lines)
	if len(added)+len(removed) == 0 {
		return true, nil
	}
	fmt.Fprintf(out, "api-check: the exported API of %s differs from %s:\n", modPath, file)
	for _, l := range removed {
		fmt.Fprintf(out, "- %s (listed, gone)\n", l)
	}
	for _, l := range added {
		fmt.Fprintf(out, "+ %s (new, not listed)\n", l)
	}
	return false, nil
}

// diff returns the lines of got missing from want (added) and of want missing from got
// (removed), each sorted.
func diff(want, got []string) (added, removed []string) {
	in := func(l []string) map[string]bool {
		m := map[string]bool{}
		for _, s := range l {
			if s != "" {
				m[s] = true
			}
		}
		return m
	}
	w, g := in(want), in(got)
	for s := range g {
		if !w[s] {
			added = append(added, s)
		}
	}
	for s := range w {
		if !g[s] {
			removed = append(removed, s)
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	return added, removed
}
