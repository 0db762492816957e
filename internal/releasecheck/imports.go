package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// imports checks every import of m's Go files, tests and every build's files included: a
// package of another of the repository's modules may not be internal to it (Go allows it
// here, where the import paths share a prefix, but it ties each release of m to one release
// of that module), and a published module may import no unpublished one.
func imports(root string, m *repoModule, mods []*repoModule) ([]string, error) {
	var problems []string
	dir := filepath.Join(root, m.dir)
	err := filepath.WalkDir(dir, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name != dir && skipDir(name, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, name)
		for _, spec := range f.Imports {
			p, _ := strconv.Unquote(spec.Path.Value)
			if problem := importProblem(m, p, mods); problem != "" {
				problems = append(problems, fmt.Sprintf("%s: imports %s: %s", filepath.ToSlash(rel), p, problem))
			}
		}
		return nil
	})
	return problems, err
}

// skipDir reports whether a directory holds none of its module's Go files: another module,
// testdata, or one that the go command ignores.
func skipDir(name, base string) bool {
	if base == "testdata" || base == "vendor" || strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") {
		return true
	}
	_, err := os.Stat(filepath.Join(name, "go.mod"))
	return err == nil
}

// importProblem says what is wrong with m importing the package at p, or "".
func importProblem(m *repoModule, p string, mods []*repoModule) string {
	o := owner(p, mods)
	if o == nil || o == m {
		return ""
	}
	if !o.published && m.published {
		return fmt.Sprintf("a package of %s, which is never released", o.dir)
	}
	if m.published && slices.Contains(strings.Split(strings.TrimPrefix(p, o.path), "/"), "internal") {
		return fmt.Sprintf("an internal package of the module %s", o.path)
	}
	return ""
}
