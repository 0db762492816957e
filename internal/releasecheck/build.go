package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
)

// build builds and vets each published module's packages, tests included, from a throwaway
// module outside the workspace that requires it at c.version, with the repository's modules
// served by a proxy written from the files under root.
func (c *check) build(root string, mods []*repoModule) error {
	tmp, err := os.MkdirTemp("", "releasecheck-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	proxy := filepath.Join(tmp, "proxy")
	if err := writeProxy(proxy, root, mods, c.version); err != nil {
		return err
	}
	env, err := userEnv(tmp, proxy, mods[0].path)
	if err != nil {
		return err
	}
	sums, err := repoSums(root, mods)
	if err != nil {
		return err
	}
	failed := 0
	for i, m := range mods {
		if !m.published {
			fmt.Fprintf(c.out, "--   %s: unpublished, not built as a user's\n", m.dir)
			continue
		}
		dir := filepath.Join(tmp, fmt.Sprintf("user%d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		gomod := fmt.Sprintf("module example.com/releasecheck/user\n\ngo %s\n\nrequire %s %s\n", goVersion(m.mod), m.path, c.version)
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "go.sum"), sums, 0o644); err != nil {
			return err
		}
		if !c.userBuild(dir, env, m) {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d modules do not build as a user gets them at %s", failed, c.version)
	}
	return nil
}

// userBuild builds and vets m's packages from the user's module in dir, and reports whether
// both passed.
func (c *check) userBuild(dir string, env []string, m *repoModule) bool {
	pkgs := m.path + "/..."
	fail := func(step string, err error, out string) bool {
		fmt.Fprintf(c.out, "FAIL %s: a user's %s of %s %s: %v\n%s\n", m.dir, step, m.path, c.version, err, indent(out))
		return false
	}
	out, err := goCmd(dir, env, "list", pkgs)
	if err != nil {
		return fail("go list", err, out)
	}
	n := 0 // the packages listed, among the go command's other lines
	for _, line := range strings.Split(out, "\n") {
		if line == m.path || strings.HasPrefix(line, m.path+"/") {
			n++
		}
	}
	if n == 0 {
		return fail("go list", errors.New("no packages"), out)
	}
	for _, step := range []string{"build", "vet"} {
		if out, err := goCmd(dir, env, step, pkgs); err != nil {
			return fail("go "+step, err, out)
		}
	}
	fmt.Fprintf(c.out, "ok   %s: a user's module builds and vets %s %s (packages: %d)\n", m.dir, m.path, c.version, n)
	return true
}

// userEnv is the environment of a user's build: no workspace, a module cache of its own (so
// that no earlier run's zip of the same version is used), the repository's modules from
// proxy, the others from the local module cache, else from GOPROXY, and no checksum
// database for the repository's modules, which it does not know yet.
func userEnv(tmp, proxy, core string) ([]string, error) {
	cache, err := goEnv("GOMODCACHE")
	if err != nil {
		return nil, err
	}
	upstream, err := goEnv("GOPROXY")
	if err != nil {
		return nil, err
	}
	proxies := "file://" + filepath.ToSlash(proxy) + ",file://" + filepath.ToSlash(filepath.Join(cache, "cache", "download"))
	if upstream != "" && upstream != "off" {
		proxies += "," + upstream
	}
	return []string{
		"GOWORK=off",
		// -trimpath keeps the module cache's directory out of the build cache's keys, so that
		// a package compiled by an earlier run, in another temporary cache, is reused.
		"GOFLAGS=-mod=mod -modcacherw -trimpath",
		"GOMODCACHE=" + filepath.Join(tmp, "modcache"),
		"GOPROXY=" + proxies,
		"GONOSUMDB=" + core,
		"GONOPROXY=",
		"GOPRIVATE=",
		"GOTOOLCHAIN=local",
	}, nil
}

// repoSums returns the lines of the modules' go.sum files: the user's go.sum starts with
// them, so that the other modules need no checksum database.
func repoSums(root string, mods []*repoModule) ([]byte, error) {
	seen := map[string]bool{}
	var sums []byte
	for _, m := range mods {
		data, err := os.ReadFile(filepath.Join(root, m.dir, "go.sum"))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, line := range strings.SplitAfter(string(data), "\n") {
			if line = strings.TrimSpace(line); line != "" && !seen[line] {
				seen[line] = true
				sums = append(sums, line+"\n"...)
			}
		}
	}
	return sums, nil
}

// goVersion is the go line of the user's module: the one of the module it builds.
func goVersion(f *modfile.File) string {
	if f.Go == nil {
		return "1.21"
	}
	return f.Go.Version
}
