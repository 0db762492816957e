package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// defaultRun runs the default scenario once for every test that checks it.
var defaultRun = sync.OnceValues(func() ([]*result, error) {
	opts, err := parseFlags(nil, nil)
	if err != nil {
		return nil, err
	}
	prof, err := newProfile(opts.sc.profile, opts.sc.servers, opts.sc.duration, opts.sc.seed)
	if err != nil {
		return nil, err
	}
	return simulateAll(&opts.sc, prof)
})

func defaultResults(t *testing.T) map[string]*result {
	t.Helper()
	if raceDetector {
		t.Skip("the default scenario takes minutes under the race detector; its runs share nothing, and the shorter runs of the other tests cover simulateAll's goroutines")
	}
	results, err := defaultRun()
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string]*result{}
	for _, r := range results {
		byKind[r.policy.kind] = r
	}
	return byKind
}

func TestSameSeedSameOutput(t *testing.T) {
	args := []string{"-scenario", "noisy", "-servers", "12", "-duration", "20s", "-window", "500ms", "-seed", "7"}
	first, second := runOK(t, args), runOK(t, args)
	if !bytes.Equal(first, second) {
		t.Fatalf("two runs with the same seed differ:\n%s\n---\n%s", first, second)
	}
	if other := runOK(t, []string{"-scenario", "noisy", "-servers", "12", "-duration", "20s", "-window", "500ms", "-seed", "8"}); bytes.Equal(first, other) {
		t.Fatal("two seeds gave the same output")
	}
}

func TestSameSeedSameChartFile(t *testing.T) {
	dir := t.TempDir()
	var files [2][]byte
	for i := range files {
		path := filepath.Join(dir, "run"+string(rune('a'+i))+".svg")
		runOK(t, []string{"-servers", "12", "-duration", "10s", "-window", "500ms", "-chart=false", "-out", path})
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files[i] = b
	}
	if !bytes.HasPrefix(files[0], []byte("<?xml")) || !bytes.Contains(files[0], []byte("<svg")) {
		t.Fatalf("not an SVG: %.80q", files[0])
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Fatal("two SVGs of the same run differ")
	}
}

func runOK(t *testing.T, args []string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("run %q: exit %d: %s", args, code, stderr.String())
	}
	return stdout.Bytes()
}

// In the default scenario (50 servers, 25 from 60 s to 120 s, offered twice
// the nominal capacity, 50 ms timeout), the adaptive limits keep latency low
// and goodput high where no limit and a bulkhead sized for a good day
// collapse once the capacity halves. Measured with seed 1:
//
//	policy      p99      calls answered in time
//	Gradient2   29.5 ms  687932
//	AIMD        27.7 ms  683322
//	fixed 150   50.0 ms  599613 (every call times out while the capacity is halved)
//	no limit    50.0 ms     468 (the queue grows until every call times out)
func TestDefaultScenarioAdaptiveBeatsNoLimitAndHighBulkhead(t *testing.T) {
	r := defaultResults(t)
	for _, adaptive := range []string{"gradient2", "aimd"} {
		for _, fixed := range []string{"none", "high"} {
			a, f := r[adaptive], r[fixed]
			if ap, fp := a.latency.quantile(0.99), f.latency.quantile(0.99); ap >= fp {
				t.Errorf("p99: %s %s, not below %s %s", adaptive, millis(ap), fixed, millis(fp))
			}
			if ag, fg := a.total().completed, f.total().completed; ag <= fg {
				t.Errorf("goodput: %s %d calls, not above %s %d", adaptive, ag, fixed, fg)
			}
		}
	}
}

// The limit at the end of each third of the run: it falls while the capacity
// is halved and rises once it is back. Measured with seed 1: Gradient2 67,
// 47, 94; AIMD 59, 40, 70.
func TestDefaultScenarioLimitFollowsCapacity(t *testing.T) {
	r := defaultResults(t)
	for _, kind := range []string{"gradient2", "aimd"} {
		tl := r[kind].timeline
		atDrop, atReturn, atEnd := tl[len(tl)/3-1], tl[2*len(tl)/3-1], tl[len(tl)-1]
		if atDrop.servers != 50 || atReturn.servers != 25 || atEnd.servers != 50 {
			t.Fatalf("unexpected profile: %d, %d, %d servers", atDrop.servers, atReturn.servers, atEnd.servers)
		}
		if atReturn.limit >= atDrop.limit {
			t.Errorf("%s: limit %d at the end of the low capacity, not below %d before the drop", kind, atReturn.limit, atDrop.limit)
		}
		if atEnd.limit <= atReturn.limit {
			t.Errorf("%s: limit %d at the end, not above %d when the capacity returned", kind, atEnd.limit, atReturn.limit)
		}
	}
}

func TestDefaultScenarioLeaksNoSlot(t *testing.T) {
	for kind, r := range defaultResults(t) {
		if r.leaked != 0 {
			t.Errorf("%s: %d slots held after the run drained", kind, r.leaked)
		}
		total := r.total()
		if answered := total.completed + total.timeouts; answered != total.offered-total.rejected {
			t.Errorf("%s: %d calls admitted, %d answered", kind, total.offered-total.rejected, answered)
		}
	}
}
