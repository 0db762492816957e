package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain keeps the go commands off the workspace and the network: the fixture needs
// nothing but the standard library.
func TestMain(m *testing.M) {
	os.Setenv("GOWORK", "off")
	os.Setenv("GOPROXY", "off")
	os.Exit(m.Run())
}

// lib is a module with one of each kind of identifier, an internal package and a command,
// which are not listed.
var lib = map[string]string{
	"go.mod": "module example.com/lib\n\ngo 1.26.0\n",
	"lib.go": `package lib

import (
	"context"
	"io"
	"time"
)

const Max = 1 << 24

const Window time.Duration = time.Second

type Kind int

const (
	A Kind = iota + 1
	B
)

func (k Kind) String() string { return "" }

var ErrFull = io.EOF

type Config struct {
	Name  string
	Wait  time.Duration
	Hook  func(name string, n int)
	inner int
}

type Limiter struct{ inner }

type inner struct{}

func (inner) Promoted() int { return 0 }

func New(Config) (*Limiter, error) { return nil, nil }

func (l *Limiter) Acquire(ctx context.Context, names ...string) (p Permit, err error) { return }

type Permit struct{ _ noCopy }

type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

func (p *Permit) Done(error) {}

type Clock interface {
	Nanotime() int64
	private()
}

func Do[T any](ctx context.Context, l *Limiter, fn func(context.Context) (T, error)) (T, error) {
	var zero T
	return zero, nil
}

type Pair[K comparable, V any] struct{ Key K }

func (p Pair[K, V]) Get() V { var v V; return v }

type Alias = Config

func unexported() {}
`,
	"sub/sub.go":          "package sub\n\nimport \"example.com/lib\"\n\nfunc Wrap(*lib.Limiter) lib.Permit { return lib.Permit{} }\n",
	"internal/x/x.go":     "package x\n\nfunc Hidden() {}\n",
	"cmd/tool/main.go":    "package main\n\nfunc Exported() {}\n\nfunc main() {}\n",
	"lib_test.go":         "package lib\n\nfunc TestOnly() {}\n",
	"testdata/t/t.go":     "package t\n\nfunc Fixture() {}\n",
	"sub/example_test.go": "package sub_test\n\nfunc Example() {}\n",
}

const libListing = `pkg example.com/lib, const A Kind = 1
pkg example.com/lib, const B Kind = 2
pkg example.com/lib, const Max untyped int = 16777216
pkg example.com/lib, const Window time.Duration = 1000000000
pkg example.com/lib, func Do[T any](context.Context, *Limiter, func(context.Context) (T, error)) (T, error)
pkg example.com/lib, func New(Config) (*Limiter, error)
pkg example.com/lib, method (*Limiter) Acquire(context.Context, ...string) (Permit, error)
pkg example.com/lib, method (*Permit) Done(error)
pkg example.com/lib, method (Kind) String() string
pkg example.com/lib, method (Limiter) Promoted() int
pkg example.com/lib, method (Pair[K, V]) Get() V
pkg example.com/lib, type Alias = Config
pkg example.com/lib, type Clock interface { Nanotime, unexported methods }
pkg example.com/lib, type Clock interface, Nanotime() int64
pkg example.com/lib, type Config struct
pkg example.com/lib, type Config struct, Hook func(name string, n int)
pkg example.com/lib, type Config struct, Name string
pkg example.com/lib, type Config struct, Wait time.Duration
pkg example.com/lib, type Kind int
pkg example.com/lib, type Limiter struct
pkg example.com/lib, type Pair[K comparable, V any] struct
pkg example.com/lib, type Pair[K comparable, V any] struct, Key K
pkg example.com/lib, type Permit struct
pkg example.com/lib, var ErrFull error
pkg example.com/lib/sub, func Wrap(*lib.Limiter) lib.Permit
`

// writeFiles writes files, changed by edits (a file's new content, "" to delete it), under
// dir.
func writeFiles(t *testing.T, dir string, files, edits map[string]string) {
	t.Helper()
	all := map[string]string{}
	for name, content := range files {
		all[name] = content
	}
	for name, content := range edits {
		all[name] = content
	}
	for name, content := range all {
		name = filepath.Join(dir, filepath.FromSlash(name))
		if content == "" {
			os.Remove(name)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The listing names every exported identifier of the packages a user imports, in the Go
// project's style, and nothing else.
func TestListing(t *testing.T) {
	root := t.TempDir()
	mod := filepath.Join(root, "lib")
	writeFiles(t, mod, lib, nil)
	apiDir := filepath.Join(root, "api")
	var out strings.Builder
	ok, err := run([]string{mod}, nil, apiDir, true, &out)
	if err != nil || !ok {
		t.Fatalf("writing: ok %v, err %v: %s", ok, err, out.String())
	}
	got, err := os.ReadFile(filepath.Join(apiDir, "lib.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != libListing {
		t.Errorf("listing:\n%s\nwant:\n%s", got, libListing)
	}
	ok, err = run([]string{mod}, nil, apiDir, false, &out)
	if err != nil || !ok || out.Len() != 0 {
		t.Errorf("checking the listing just written: ok %v, err %v: %s", ok, err, out.String())
	}
}

// A change to the API that the listing does not show fails the check, which names each
// identifier added or removed and says how to update the listing; an unpublished module is
// not checked.
func TestCheckFailsOnUnlistedChange(t *testing.T) {
	root := t.TempDir()
	mod := filepath.Join(root, "lib")
	writeFiles(t, mod, lib, nil)
	apiDir := filepath.Join(root, "api")
	var out strings.Builder
	if ok, err := run([]string{mod}, nil, apiDir, true, &out); err != nil || !ok {
		t.Fatalf("writing: ok %v, err %v: %s", ok, err, out.String())
	}
	changed := strings.Replace(lib["lib.go"], "func (p *Permit) Done(error) {}", "func (p *Permit) Done(error) {}\n\nfunc (p *Permit) Move() Permit { return Permit{} }", 1)
	changed = strings.Replace(changed, "const Max = 1 << 24", "const Max = 1 << 20", 1)
	writeFiles(t, mod, lib, map[string]string{"lib.go": changed, "sub/sub.go": "package sub\n"})
	ok, err := run([]string{mod}, nil, apiDir, false, &out)
	if err != nil || ok {
		t.Fatalf("checking a changed API: ok %v, err %v: %s", ok, err, out.String())
	}
	for _, want := range []string{
		"the exported API of example.com/lib differs from " + filepath.Join(apiDir, "lib.txt"),
		"- pkg example.com/lib, const Max untyped int = 16777216 (listed, gone)",
		"- pkg example.com/lib/sub, func Wrap(*lib.Limiter) lib.Permit (listed, gone)",
		"+ pkg example.com/lib, const Max untyped int = 1048576 (new, not listed)",
		"+ pkg example.com/lib, method (*Permit) Move() Permit (new, not listed)",
		"run `make api`",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the check's output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if ok, err := run([]string{mod}, []string{mod}, apiDir, false, &out); err != nil || !ok || out.Len() != 0 {
		t.Errorf("an unpublished module is checked: ok %v, err %v: %s", ok, err, out.String())
	}
}
