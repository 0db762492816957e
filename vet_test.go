package adaptivelimit

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// go vet reports a copy of a Permit, as it does a copy of a sync.Mutex: the misuse of the
// Permit doc, a helper that finishes a copy while the caller defers Cancel, is caught before
// it runs, and so are the slices and ranges that copy permits; the ways the doc gives to hand
// a permit on pass. The program, in testdata/copiedpermit, marks each line vet must report.
func TestVetReportsCopiedPermit(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	const dir = "testdata/copiedpermit"
	src, err := os.ReadFile(filepath.Join(dir, "copied.go"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]string{} // line: the words of vet's report
	for i, line := range strings.Split(string(src), "\n") {
		if _, words, ok := strings.Cut(line, "// vet: "); ok {
			want[i+1] = words
		}
	}
	out, err := exec.Command(goCmd, "vet", "./"+dir).CombinedOutput()
	if err == nil {
		t.Fatalf("go vet passed the copied permits:\n%s", out)
	}
	report := regexp.MustCompile(`copied\.go:(\d+):\d+: (.*)`)
	got := map[int]string{}
	for _, m := range report.FindAllStringSubmatch(string(out), -1) {
		line, _ := strconv.Atoi(m[1])
		got[line] = m[2]
	}
	for line, words := range want {
		if !strings.Contains(got[line], words) || !strings.Contains(got[line], "adaptivelimit.Permit") {
			t.Errorf("copied.go:%d: go vet reports %q, want %q about adaptivelimit.Permit", line, got[line], words)
		}
	}
	for _, line := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[line]; !ok {
			t.Errorf("copied.go:%d: go vet reports %q of a line that hands a permit on as the doc says", line, got[line])
		}
	}
	if t.Failed() {
		t.Logf("go vet:\n%s", out)
	}
}
