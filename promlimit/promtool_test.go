package promlimit

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/resilience4cata/adaptivelimit/limittest"
)

// requirePrometheusEnv names the variable that makes a missing Prometheus binary fail the
// tests that run it rather than skip them: make test sets it where it installs Prometheus,
// and CI always.
const requirePrometheusEnv = "REQUIRE_PROMETHEUS"

// tool returns the path of one of Prometheus's binaries (Debian's package "prometheus" holds
// both prometheus and promtool), or skips the test with a notice where it is missing.
func tool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv(requirePrometheusEnv) != "" {
		t.Fatalf("%s is missing and %s is set: install Prometheus (apt-get install prometheus, or make prometheus)", name, requirePrometheusEnv)
	}
	t.Skipf("notice: %s is missing, so this test is SKIPPED: install Prometheus (apt-get install prometheus, or make prometheus), or set %s=1 to fail instead", name, requirePrometheusEnv)
	return ""
}

func promtool(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(tool(t, "promtool"), args...).CombinedOutput()
	require.NoError(t, err, "promtool %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}

// The alerting rules load, and their unit tests pass.
func TestAlertRules(t *testing.T) {
	require.Contains(t, promtool(t, "check", "rules", "alerts.yaml"), "SUCCESS: 4 rules found")
	require.Contains(t, promtool(t, "test", "rules", "alerts_test.yaml"), "SUCCESS")
}

// grafanaVariable is a dashboard variable in an expression: $name or ${name}.
var grafanaVariable = regexp.MustCompile(`\$\{?(\w+)\}?`)

// dashboardExpressions returns the PromQL expressions of dashboard.json: its panels' targets,
// and the metric of its label_values variables, with Grafana's variables replaced as
// Grafana would: its intervals by 5m, a limiter's name by a regular expression.
func dashboardExpressions(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("dashboard.json")
	require.NoError(t, err)
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
		Templating struct {
			List []struct {
				Type  string
				Query json.RawMessage
			}
		}
	}
	require.NoError(t, json.Unmarshal(data, &d))
	var exprs []string
	for _, p := range d.Panels {
		require.NotEmpty(t, p.Targets, "panel %q", p.Title)
		for _, target := range p.Targets {
			exprs = append(exprs, target.Expr)
		}
	}
	labelValues := regexp.MustCompile(`^label_values\((.+), *\w+\)$`)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct{ Query string }
		require.NoError(t, json.Unmarshal(v.Query, &q))
		m := labelValues.FindStringSubmatch(q.Query)
		require.NotNil(t, m, "variable query %q", q.Query)
		exprs = append(exprs, m[1])
	}
	for i, e := range exprs {
		exprs[i] = grafanaVariable.ReplaceAllStringFunc(e, func(v string) string {
			if strings.HasPrefix(strings.Trim(v, "${}"), "__") {
				return "5m"
			}
			return ".*"
		})
	}
	return exprs
}

// Every expression of the dashboard parses: promtool checks each as a recording rule.
func TestDashboardExpressions(t *testing.T) {
	exprs := dashboardExpressions(t)
	require.GreaterOrEqual(t, len(exprs), 8)
	type rule struct {
		Record string `json:"record"`
		Expr   string `json:"expr"`
	}
	var rules []rule
	for i, e := range exprs {
		rules = append(rules, rule{Record: fmt.Sprintf("dashboard:expression_%d", i), Expr: e})
	}
	file := map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}}
	data, err := json.Marshal(file) // JSON is YAML
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "dashboard_rules.yaml")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	require.Contains(t, promtool(t, "check", "rules", path), fmt.Sprintf("SUCCESS: %d rules found", len(rules)))
}

// The dashboard and the alerts name only series that the collector exports: a misspelt
// name parses, and shows nothing.
func TestDashboardAndAlertsSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(NewCollector(limittest.Orders(t))))
	families, err := reg.Gather()
	require.NoError(t, err)
	var exported []string
	for _, f := range families {
		exported = append(exported, f.GetName())
	}
	alerts, err := os.ReadFile("alerts.yaml")
	require.NoError(t, err)
	series := regexp.MustCompile(`\br4c_[a-z_]+`)
	for source, text := range map[string]string{
		"dashboard.json": strings.Join(dashboardExpressions(t), "\n"),
		"alerts.yaml":    string(alerts),
	} {
		names := series.FindAllString(text, -1)
		require.NotEmpty(t, names, source)
		for _, name := range names {
			require.True(t, slices.Contains(exported, name), "%s names %s, which the collector does not export", source, name)
		}
	}
}
