package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// check is one run of the release check over a repository's modules.
type check struct {
	version     string
	dirs        []string // module directories relative to the root, the core first
	unpublished []string // of dirs, those never tagged
	out         io.Writer
}

// repoModule is one of the repository's modules.
type repoModule struct {
	dir       string // as given, relative to the root
	path      string
	mod       *modfile.File
	published bool
}

// run checks the modules under root: first what each go.mod and each import says, then,
// where nothing failed, whether each published module builds as a user would get it.
func (c *check) run(root string) error {
	if !semver.IsValid(c.version) || semver.Canonical(c.version) != c.version || semver.Build(c.version) != "" {
		return fmt.Errorf("-version %q is not a release version vX.Y.Z[-pre]", c.version)
	}
	mods, err := c.load(root)
	if err != nil {
		return err
	}
	var problems []string
	for _, m := range mods {
		problems = append(problems, requirements(m, mods, c.version)...)
		p, err := imports(root, m, mods)
		if err != nil {
			return err
		}
		problems = append(problems, p...)
		problems = append(problems, tidy(root, m)...)
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(c.out, "FAIL", p)
		}
		return fmt.Errorf("%d problems in the modules for %s", len(problems), c.version)
	}
	fmt.Fprintf(c.out, "ok   %d modules: the repository's modules required at %s, no other module's internal package imported, tidy\n", len(mods), c.version)
	return c.build(root, mods)
}

// load reads each module's go.mod.
func (c *check) load(root string) ([]*repoModule, error) {
	var mods []*repoModule
	for _, d := range c.unpublished {
		if !slices.Contains(c.dirs, d) {
			return nil, fmt.Errorf("unpublished module %s is not among the modules %v", d, c.dirs)
		}
	}
	for _, d := range c.dirs {
		name := filepath.Join(root, d, "go.mod")
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		f, err := modfile.Parse(name, data, nil)
		if err != nil {
			return nil, err
		}
		if f.Module == nil {
			return nil, fmt.Errorf("%s has no module line", name)
		}
		mods = append(mods, &repoModule{dir: d, path: f.Module.Mod.Path, mod: f, published: !slices.Contains(c.unpublished, d)})
	}
	if !mods[0].published {
		return nil, fmt.Errorf("the core %s (the first module) is unpublished", mods[0].dir)
	}
	return mods, nil
}

// owner returns the repository's module that holds the package at importPath, or nil.
func owner(importPath string, mods []*repoModule) *repoModule {
	var best *repoModule
	for _, m := range mods {
		if (importPath == m.path || strings.HasPrefix(importPath, m.path+"/")) && (best == nil || len(m.path) > len(best.path)) {
			best = m
		}
	}
	return best
}

// requirements checks that m requires the repository's modules at version and replaces
// only them, each by its directory: a user's build ignores replace lines, so a replaced
// third-party module would build differently there.
func requirements(m *repoModule, mods []*repoModule, version string) []string {
	var problems []string
	for _, r := range m.mod.Require {
		if owner(r.Mod.Path, mods) != nil && r.Mod.Version != version {
			problems = append(problems, fmt.Sprintf("%s: requires %s %s, not the release version %s", m.dir, r.Mod.Path, r.Mod.Version, version))
		}
	}
	for _, r := range m.mod.Replace {
		target := modByPath(r.Old.Path, mods)
		switch {
		case target == nil:
			problems = append(problems, fmt.Sprintf("%s: replaces %s, which is not one of the repository's modules: a user's build would not see it", m.dir, r.Old.Path))
		case r.New.Version != "" || path.Clean(path.Join(filepath.ToSlash(m.dir), r.New.Path)) != path.Clean(filepath.ToSlash(target.dir)):
			problems = append(problems, fmt.Sprintf("%s: replaces %s by %s, not by its directory %s", m.dir, r.Old.Path, r.New.Path, target.dir))
		}
	}
	return problems
}

func modByPath(p string, mods []*repoModule) *repoModule {
	for _, m := range mods {
		if m.path == p {
			return m
		}
	}
	return nil
}

// tidy reports m's go mod tidy -diff, if it would change anything.
func tidy(root string, m *repoModule) []string {
	out, err := goCmd(filepath.Join(root, m.dir), nil, "mod", "tidy", "-diff")
	if err != nil {
		var exit *execError
		if errors.As(err, &exit) {
			return []string{fmt.Sprintf("%s: not tidy (go mod tidy -diff):\n%s", m.dir, indent(out))}
		}
		return []string{fmt.Sprintf("%s: go mod tidy -diff: %v", m.dir, err)}
	}
	return nil
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}
