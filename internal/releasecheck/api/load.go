package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
)

// listed is the part of go list -json that the walk reads.
type listed struct {
	ImportPath string
	Name       string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	Export     string
	ImportMap  map[string]string
	Module     *struct{ Path string }
	Error      *struct{ Err string }
}

// load type-checks the packages of the module in dir that a user imports: not the internal
// ones, not commands. Their imports come from the export data that go list -export builds.
func load(dir string) (modPath string, pkgs []*types.Package, err error) {
	cmd := exec.Command("go", "list", "-e", "-export", "-deps", "-json", "./...")
	cmd.Dir = dir
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", nil, fmt.Errorf("go list in %s: %v: %s", dir, err, stderr.String())
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", nil, err
	}
	modPath = modfile.ModulePath(gomod)
	exports := map[string]string{}
	var targets []*listed
	dec := json.NewDecoder(&out)
	for {
		p := new(listed)
		if err := dec.Decode(p); err == io.EOF {
			break
		} else if err != nil {
			return "", nil, err
		}
		if p.Error != nil {
			return "", nil, fmt.Errorf("%s: %s", p.ImportPath, p.Error.Err)
		}
		exports[p.ImportPath] = p.Export
		if p.Module != nil && p.Module.Path == modPath && p.Name != "main" && !isInternal(p.ImportPath) {
			targets = append(targets, p)
		}
	}
	fset := token.NewFileSet()
	for _, p := range targets {
		imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
			if file := exports[path]; file != "" {
				return os.Open(file)
			}
			return nil, fmt.Errorf("no export data for %s", path)
		})
		var files []*ast.File
		for _, name := range append(p.GoFiles, p.CgoFiles...) {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				return "", nil, err
			}
			files = append(files, f)
		}
		conf := types.Config{Importer: mapped{imp, p.ImportMap}, FakeImportC: len(p.CgoFiles) > 0}
		pkg, err := conf.Check(p.ImportPath, fset, files, nil)
		if err != nil {
			return "", nil, fmt.Errorf("type-checking %s: %v", p.ImportPath, err)
		}
		pkgs = append(pkgs, pkg)
	}
	return modPath, pkgs, nil
}

// isInternal reports whether path has an internal element, which no other module imports.
func isInternal(path string) bool {
	for _, elem := range strings.Split(path, "/") {
		if elem == "internal" {
			return true
		}
	}
	return false
}

// mapped resolves a package's imports as go list resolved them (vendored paths).
type mapped struct {
	types.Importer
	m map[string]string
}

func (i mapped) Import(path string) (*types.Package, error) {
	if to, ok := i.m[path]; ok {
		path = to
	}
	return i.Importer.Import(path)
}
