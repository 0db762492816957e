//go:build linux

package promlimit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/require"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/integration"
)

// A real Prometheus scrapes a server that exposes two limiters under load, one of them in a
// dry run, with alerts.yaml loaded. Once the load stops, with every slot of one limiter held
// and callers waiting for them, so that nothing moves, every series that Prometheus's HTTP
// API returns carries the value of the limiters' snapshots, and no series is missing or
// extra. The dry run's alert fires. It runs on the real clock for about 10 s, at most 60 s.
func TestRealPrometheus(t *testing.T) {
	bin := tool(t, "prometheus")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	orders, err := adaptivelimit.New(adaptivelimit.Config{
		Name: "orders", Algorithm: adaptivelimit.AIMD, InitialLimit: 6, MinLimit: 2, MaxLimit: 12,
		Window: 10 * time.Millisecond, MinWindowSamples: 5, MaxWait: time.Minute, MaxWaiters: 8,
	})
	require.NoError(t, err)
	trial, err := adaptivelimit.New(adaptivelimit.Config{
		Name: "trial", DryRun: true, InitialLimit: 3, MinLimit: 3, MaxLimit: 3,
		Window: 10 * time.Millisecond, MinWindowSamples: 5,
	})
	require.NoError(t, err)
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(NewCollector(orders, trial)))
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError})
	var scrapes atomic.Int64
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		metrics.ServeHTTP(w, r)
		scrapes.Add(1)
	}))
	defer server.Close()

	api := startPrometheus(ctx, t, bin, strings.TrimPrefix(server.URL, "http://"))

	// Load until Prometheus has scraped it three times (its first scrape comes a few seconds
	// after it starts), then freeze it.
	load(ctx, func() bool { return scrapes.Load() >= 3 }, orders, trial)
	release := freeze(t, orders, 3)
	defer release()
	want := integration.Snapshots(orders, trial)
	require.Positive(t, want[0].Successes)
	require.Positive(t, want[0].Drops)
	require.Positive(t, want[0].Ignored)
	require.Positive(t, want[0].Cancelled)
	require.Positive(t, want[0].Rejected)
	require.Positive(t, want[0].WaitAbandoned)
	require.Equal(t, 3, want[0].Waiting)
	require.Positive(t, want[1].Rejected, "the dry run would have rejected calls")

	expected := expectedSeries(want)
	var got map[string]float64
	for settle := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		got = querySeries(ctx, t, api, `{__name__=~"r4c_.+",job="adaptivelimit"}`)
		if mapsEqual(got, expected) || time.Now().After(settle) {
			break // a scrape a second: the next one after the freeze shows it
		}
	}
	require.Equal(t, expected, got, "Prometheus holds what the snapshots say")
	require.Equal(t, want, integration.Snapshots(orders, trial), "nothing moved while Prometheus scraped")

	// The rules load, and the dry run's alert fires.
	start := time.Now()
	for {
		firing := queryAlerts(ctx, t, api)
		if slices.Contains(firing, "AdaptiveLimitDryRunWouldReject/trial") {
			require.NotContains(t, firing, "AdaptiveLimitDryRunWouldReject/orders")
			break
		}
		if time.Since(start) > 10*time.Second {
			var rules any
			get(ctx, t, api+"/api/v1/rules", &rules)
			t.Fatalf("the dry run's alert never fired; firing: %v; increase: %v; rules: %v", firing,
				querySeries(ctx, t, api, `increase(r4c_adaptivelimit_dry_run_rejections_total[5m])`), rules)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// load runs calls on the limiters until done, finishing each at random: a success, a drop, an
// error that DropOn ignores, Finish(Ignore), Cancel; some wait for a slot and give up.
func load(ctx context.Context, done func() bool, limiters ...*adaptivelimit.Limiter) {
	timeout := fmt.Errorf("call: %w", context.DeadlineExceeded)
	notFound := errors.New("404")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 5))
			for !done() && ctx.Err() == nil {
				l := limiters[r.IntN(len(limiters))]
				waitCtx, cancel := context.WithTimeout(ctx, time.Duration(r.IntN(2000))*time.Microsecond)
				p, err := l.AcquireContext(waitCtx)
				cancel()
				if err != nil {
					time.Sleep(100 * time.Microsecond)
					continue
				}
				time.Sleep(time.Duration(r.IntN(1000)) * time.Microsecond)
				switch r.IntN(8) {
				case 0:
					p.Done(timeout)
				case 1:
					p.Done(notFound)
				case 2:
					p.Finish(adaptivelimit.Ignore)
				case 3:
					p.Cancel()
				default:
					p.Done(nil)
				}
			}
		})
	}
	wg.Wait()
}

// freeze takes every slot of l and has waiters callers wait for them, so that its state
// stays as it is; release frees the slots, and the waiters' calls end.
func freeze(t *testing.T, l *adaptivelimit.Limiter, waiters int) (release func()) {
	t.Helper()
	var held []adaptivelimit.Permit
	for {
		p, err := l.Acquire()
		if err != nil {
			break
		}
		held = append(held, p.Move())
	}
	require.Len(t, held, l.Limit())
	var wg sync.WaitGroup
	for range waiters {
		wg.Go(func() {
			p, err := l.AcquireContext(context.Background())
			if err == nil {
				p.Cancel()
			}
		})
	}
	for l.Snapshot().Waiting < waiters {
		time.Sleep(time.Millisecond)
	}
	return func() {
		for i := range held {
			held[i].Cancel()
		}
		wg.Wait()
	}
}

// expectedSeries is what a scrape of the snapshots gives, by series, with neither the job's
// nor the instance's label, as docs/metrics.md describes it.
func expectedSeries(snaps []adaptivelimit.Snapshot) map[string]float64 {
	m := map[string]float64{}
	for _, s := range snaps {
		put := func(name string, v float64, labels ...string) {
			m[seriesKey(name, append(labels, "name", s.Name))] = v
		}
		rejected, wouldReject := s.Rejected, uint64(0)
		if s.DryRun {
			rejected, wouldReject = 0, s.Rejected
		}
		put("r4c_calls_rejected_total", float64(s.Rejected), "kind", "adaptivelimit")
		for outcome, n := range map[string]uint64{
			"success": s.Successes, "drop": s.Drops, "ignored": s.Ignored, "cancelled": s.Cancelled, "rejected": rejected,
		} {
			put("r4c_adaptivelimit_calls_total", float64(n), "outcome", outcome)
		}
		put("r4c_adaptivelimit_dry_run_rejections_total", float64(wouldReject))
		put("r4c_adaptivelimit_wait_abandoned_total", float64(s.WaitAbandoned))
		put("r4c_adaptivelimit_waiting_calls", float64(s.Waiting))
		put("r4c_adaptivelimit_limit", float64(s.Limit))
		put("r4c_adaptivelimit_limit_exact", s.ExactLimit)
		put("r4c_adaptivelimit_limit_min", float64(s.MinLimit))
		put("r4c_adaptivelimit_limit_max", float64(s.MaxLimit))
		put("r4c_adaptivelimit_concurrent_calls", float64(s.InFlight))
		put("r4c_adaptivelimit_window_max_concurrent_calls", float64(s.Last.MaxInFlight))
		put("r4c_adaptivelimit_windows_total", float64(s.Windows))
		put("r4c_adaptivelimit_limit_changes_total", float64(s.LimitChanges))
		put("r4c_adaptivelimit_window_latency_seconds", s.WindowLatency.Seconds())
		put("r4c_adaptivelimit_baseline_latency_seconds", s.LongLatency.Seconds())
		for c := range adaptivelimit.Causes() {
			kept, up, down := s.Decisions(c)
			for d, n := range map[string]uint64{"kept": kept, "up": up, "down": down} {
				if n != 0 {
					put("r4c_adaptivelimit_decisions_total", float64(n), "reason", c.String(), "direction", d)
				}
			}
		}
	}
	return m
}

// seriesKey is a series' name and its labels, sorted: name{a="1",b="2"}.
func seriesKey(name string, labels []string) string {
	var pairs []string
	for i := 0; i < len(labels); i += 2 {
		pairs = append(pairs, labels[i]+"="+strconv.Quote(labels[i+1]))
	}
	slices.Sort(pairs)
	return name + "{" + strings.Join(pairs, ",") + "}"
}

func mapsEqual(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// querySeries asks Prometheus's HTTP API for the instant vector of query, by series, with
// neither the job's nor the instance's label.
func querySeries(ctx context.Context, t *testing.T, api, query string) map[string]float64 {
	t.Helper()
	var data struct {
		Result []struct {
			Metric map[string]string
			Value  [2]any
		}
	}
	get(ctx, t, api+"/api/v1/query?query="+url.QueryEscape(query), &data)
	m := map[string]float64{}
	for _, r := range data.Result {
		var labels []string
		for k, v := range r.Metric {
			if k != "__name__" && k != "job" && k != "instance" {
				labels = append(labels, k, v)
			}
		}
		v, err := strconv.ParseFloat(r.Value[1].(string), 64)
		require.NoError(t, err)
		m[seriesKey(r.Metric["__name__"], labels)] = v
	}
	return m
}

// queryAlerts returns the firing alerts, as alertname/name.
func queryAlerts(ctx context.Context, t *testing.T, api string) []string {
	t.Helper()
	var result struct {
		Alerts []struct {
			Labels map[string]string
			State  string
		}
	}
	get(ctx, t, api+"/api/v1/alerts", &result)
	var firing []string
	for _, a := range result.Alerts {
		if a.State == "firing" {
			firing = append(firing, a.Labels["alertname"]+"/"+a.Labels["name"])
		}
	}
	return firing
}

// get reads the data of a successful response of Prometheus's HTTP API into data.
func get(ctx context.Context, t *testing.T, u string, data any) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var body struct {
		Status string
		Error  string
		Data   json.RawMessage
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	require.Equal(t, "success", body.Status, "GET %s: %s", u, body.Error)
	require.NoError(t, json.Unmarshal(body.Data, data))
}

// startPrometheus starts the prometheus binary on a free port of 127.0.0.1, with its storage
// in a temporary directory, scraping target every second and evaluating alerts.yaml every
// second; it returns the base URL of its HTTP API once it is ready. Prometheus stops when
// the test ends (SIGTERM, then SIGKILL after 10 s), and dies with the test's process.
func startPrometheus(ctx context.Context, t *testing.T, bin, target string) string {
	t.Helper()
	rules, err := filepath.Abs("alerts.yaml")
	require.NoError(t, err)
	dir := t.TempDir()
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 900ms
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: adaptivelimit
    static_configs:
      - targets: [%q]
`, rules, target)
	configPath := filepath.Join(dir, "prometheus.yml")
	require.NoError(t, os.WriteFile(configPath, []byte(config), 0o600))

	for attempt := 1; ; attempt++ {
		addr := freeAddr(t)
		var out bytes.Buffer
		cmd := exec.CommandContext(ctx, bin,
			"--config.file="+configPath,
			"--storage.tsdb.path="+filepath.Join(dir, "data"),
			"--web.listen-address="+addr,
			"--log.level=warn",
		)
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
		cmd.WaitDelay = 10 * time.Second
		require.NoError(t, cmd.Start())
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		stop := func() {
			_ = cmd.Cancel()
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		}
		api := "http://" + addr
		if ready(ctx, api, exited) {
			t.Cleanup(func() {
				stop()
				if t.Failed() {
					t.Logf("prometheus output:\n%s", out.String())
				}
			})
			return api
		}
		stop()
		// Another process may have taken the port between freeAddr and the start.
		if attempt == 3 || !strings.Contains(out.String(), "address already in use") {
			t.Fatalf("prometheus did not become ready:\n%s", out.String())
		}
	}
}

// ready polls api's readiness until it answers 200, the process exits or ctx is done.
func ready(ctx context.Context, api string, exited <-chan error) bool {
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, api+"/-/ready", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		select {
		case err := <-exited:
			_ = err
			return false
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// freeAddr returns an address of 127.0.0.1 with a port that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}
