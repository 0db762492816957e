package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// writeProxy writes, under dir, a module proxy (the layout GOPROXY=file:// reads) that
// holds each published module at version, zipped from the files git would commit.
func writeProxy(dir, root string, mods []*repoModule, version string) error {
	files, err := gitFiles(root)
	if err != nil {
		return err
	}
	info, err := json.Marshal(struct{ Version, Time string }{version, time.Now().UTC().Format(time.RFC3339)})
	if err != nil {
		return err
	}
	for _, m := range mods {
		if !m.published {
			continue
		}
		escaped, err := module.EscapePath(m.path)
		if err != nil {
			return err
		}
		v := filepath.Join(dir, filepath.FromSlash(escaped), "@v")
		if err := os.MkdirAll(v, 0o755); err != nil {
			return err
		}
		gomod, err := os.ReadFile(filepath.Join(root, m.dir, "go.mod"))
		if err != nil {
			return err
		}
		var zip bytes.Buffer
		if err := modzip.Create(&zip, module.Version{Path: m.path, Version: version}, moduleFiles(root, m.dir, files)); err != nil {
			return fmt.Errorf("%s: %v", m.dir, err)
		}
		for name, data := range map[string][]byte{
			"list": []byte(version + "\n"), version + ".info": info, version + ".mod": gomod, version + ".zip": zip.Bytes(),
		} {
			if err := os.WriteFile(filepath.Join(v, name), data, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// gitFiles lists the files under root that git would commit: tracked and untracked, not
// ignored, and still there. The paths are relative to root, with slashes.
func gitFiles(root string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s: %v", root, err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" {
			continue
		}
		if _, err := os.Lstat(filepath.Join(root, f)); err == nil { // not deleted since
			files = append(files, f)
		}
	}
	return files, nil
}

// moduleFiles returns the files of the module in dir, for modzip.Create, which leaves out
// the nested modules' files.
func moduleFiles(root, dir string, files []string) []modzip.File {
	prefix := filepath.ToSlash(filepath.Clean(dir)) + "/"
	if prefix == "./" {
		prefix = ""
	}
	var mf []modzip.File
	for _, f := range files {
		if rel, ok := strings.CutPrefix(f, prefix); ok {
			mf = append(mf, repoFile{name: filepath.Join(root, filepath.FromSlash(f)), rel: rel})
		}
	}
	return mf
}

type repoFile struct{ name, rel string }

func (f repoFile) Path() string                 { return f.rel }
func (f repoFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.name) }
func (f repoFile) Open() (io.ReadCloser, error) { return os.Open(f.name) }
