package main

import (
	"archive/zip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMain keeps the check's go commands off the network: the fixture's modules need none
// but their own, which the check's proxy serves.
func TestMain(m *testing.M) {
	os.Setenv("GOPROXY", "off")
	os.Setenv("GOWORK", "off")
	os.Exit(m.Run())
}

// fixture is a repository of three modules: the core example.com/lim, a published
// integration plug, and an unpublished tool that uses the core's internal package.
var fixture = map[string]string{
	".gitignore":        "/out/\nignored.go\n",
	"go.mod":            "module example.com/lim\n\ngo 1.26.0\n",
	"lim.go":            "package lim\n\nconst X = 1\n",
	"internal/x/x.go":   "package x\n\nconst Z = 2\n",
	"out/big.txt":       "built here, not released\n",
	"plug/go.mod":       "module example.com/lim/plug\n\ngo 1.26.0\n\nrequire example.com/lim v0.1.0\n\nreplace example.com/lim => ../\n",
	"plug/plug.go":      "package plug\n\nimport \"example.com/lim\"\n\nconst Y = lim.X\n",
	"plug/plug_test.go": "package plug\n\nimport \"testing\"\n\nfunc TestY(t *testing.T) {\n\tif Y != 1 {\n\t\tt.Fatal(Y)\n\t}\n}\n",
	"tool/go.mod":       "module example.com/lim/tool\n\ngo 1.26.0\n\nrequire example.com/lim v0.1.0\n\nreplace example.com/lim => ../\n",
	"tool/main.go":      "package main\n\nimport \"example.com/lim/internal/x\"\n\nfunc main() { println(x.Z) }\n",
}

// writeFixture writes the fixture, changed by edits (a file's new content, "" to delete it),
// into a new git repository and returns its root.
func writeFixture(t *testing.T, edits map[string]string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{}
	for name, content := range fixture {
		files[name] = content
	}
	for name, content := range edits {
		files[name] = content
	}
	for name, content := range files {
		if content == "" {
			continue
		}
		name = filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "-C", root, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	return root
}

func runCheck(t *testing.T, root, version string) (string, error) {
	t.Helper()
	var out strings.Builder
	c := check{version: version, dirs: []string{".", "./plug", "./tool"}, unpublished: []string{"./tool"}, out: &out}
	err := c.run(root)
	t.Logf("output:\n%s", out.String())
	return out.String(), err
}

func TestCheckPasses(t *testing.T) {
	t.Parallel()
	out, err := runCheck(t, writeFixture(t, nil), "v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"ok   3 modules: the repository's modules required at v0.1.0",
		"ok   .: a user's module builds and vets example.com/lim v0.1.0 (packages: 2)",
		"--   ./tool: unpublished",
		"ok   ./plug: a user's module builds and vets example.com/lim/plug v0.1.0 (packages: 1)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q", want)
		}
	}
}

// TestCheckFails breaks the fixture in each way the check exists to find.
func TestCheckFails(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		version string
		edits   map[string]string
		want    string
	}{
		{"another version", "v0.1.0", map[string]string{
			"plug/go.mod": strings.Replace(fixture["plug/go.mod"], "v0.1.0", "v0.0.0", 1),
		}, "FAIL ./plug: requires example.com/lim v0.0.0, not the release version v0.1.0"},
		{"the next version", "v0.2.0", nil, "FAIL ./tool: requires example.com/lim v0.1.0, not the release version v0.2.0"},
		{"internal import in a test", "v0.1.0", map[string]string{
			"plug/x_test.go": "package plug\n\nimport _ \"example.com/lim/internal/x\"\n",
		}, "FAIL plug/x_test.go: imports example.com/lim/internal/x: an internal package of the module example.com/lim"},
		{"import of an unpublished module", "v0.1.0", map[string]string{
			"tool/t/t.go":  "package t\n",
			"plug/tool.go": "package plug\n\nimport _ \"example.com/lim/tool/t\"\n",
		}, "FAIL plug/tool.go: imports example.com/lim/tool/t: a package of ./tool, which is never released"},
		{"untidy", "v0.1.0", map[string]string{
			"plug/go.mod": "module example.com/lim/plug\n\ngo 1.26.0\n\nreplace example.com/lim => ../\n",
		}, "FAIL ./plug: not tidy (go mod tidy -diff):"},
		{"third-party replace", "v0.1.0", map[string]string{
			"plug/go.mod": fixture["plug/go.mod"] + "\nreplace golang.org/x/sync => ../sync\n",
		}, "FAIL ./plug: replaces golang.org/x/sync, which is not one of the repository's modules"},
		{"replace by another directory", "v0.1.0", map[string]string{
			"plug/go.mod": strings.Replace(fixture["plug/go.mod"], "=> ../", "=> ../tool", 1),
		}, "FAIL ./plug: replaces example.com/lim by ../tool, not by its directory ."},
		{"builds only from the working tree", "v0.1.0", map[string]string{
			"lim.go":     "package lim\n",
			"ignored.go": "package lim\n\nconst X = 1\n", // git ignores it: no release has it
		}, "FAIL ./plug: a user's go build of example.com/lim/plug v0.1.0"},
		{"test that does not compile", "v0.1.0", map[string]string{
			"plug/y_test.go": "package plug\n\nvar _ = lim.Missing\n",
		}, "FAIL ./plug: a user's go vet of example.com/lim/plug v0.1.0"},
		{"not a version", "0.1", nil, `-version "0.1" is not a release version`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, err := runCheck(t, writeFixture(t, tc.edits), tc.version)
			if err == nil {
				t.Fatal("the check passed")
			}
			if !strings.Contains(out+err.Error(), tc.want) {
				t.Errorf("the check failed with %v, without %q", err, tc.want)
			}
		})
	}
}

// TestProxyZips checks what a module's zip holds: the files git would commit, without the
// nested modules' and the ignored ones.
func TestProxyZips(t *testing.T) {
	t.Parallel()
	root := writeFixture(t, map[string]string{"untracked.txt": "to be committed\n"})
	c := check{version: "v0.1.0", dirs: []string{".", "./plug", "./tool"}, unpublished: []string{"./tool"}}
	mods, err := c.load(root)
	if err != nil {
		t.Fatal(err)
	}
	proxy := t.TempDir()
	if err := writeProxy(proxy, root, mods, c.version); err != nil {
		t.Fatal(err)
	}
	for mod, want := range map[string][]string{
		"example.com/lim":      {".gitignore", "go.mod", "internal/x/x.go", "lim.go", "untracked.txt"},
		"example.com/lim/plug": {"go.mod", "plug.go", "plug_test.go"},
	} {
		r, err := zip.OpenReader(filepath.Join(proxy, mod, "@v", "v0.1.0.zip"))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range r.File {
			got = append(got, strings.TrimPrefix(f.Name, mod+"@v0.1.0/"))
		}
		r.Close()
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s's zip holds %v, want %v", mod, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(proxy, "example.com/lim/tool")); !os.IsNotExist(err) {
		t.Errorf("the unpublished module is in the proxy: %v", err)
	}
}
