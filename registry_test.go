package adaptivelimit

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The six levels a registry's user sets, lowest first (the built-in defaults are below them).
var levels = []string{"Defaults", "defaults.adaptiveLimit", `Configs["backend"]`, "configs.backend.adaptiveLimit", "Attrs", "instances.orders.adaptiveLimit"}

// companions are what the Defaults of a precedence test set beside a key that is valid only
// with another.
var companions = map[string]Config{"alpha": {Beta: 100}, "beta": {Alpha: 1}}

// resolveAt builds a registry where level i sets k to texts[i] (nothing where it is empty),
// and returns the configuration of the limiter "orders", whose site selects "backend".
func resolveAt(k *keySpec, texts []string) (Config, error) {
	rc := RegistryConfig{Configs: map[string]Config{"backend": {}}, Properties: map[string]string{}}
	if len(texts) > 0 {
		rc.Defaults = companions[k.name]
	}
	var attrs Config
	for i, text := range texts {
		if text == "" {
			continue
		}
		code := Config{}
		if i == 0 {
			code = rc.Defaults
		}
		if rule, _ := k.set(&code, text); rule != "" {
			panic(rule)
		}
		switch i {
		case 0:
			rc.Defaults = code
		case 2:
			rc.Configs["backend"] = code
		case 4:
			attrs = code
		default:
			rc.Properties[levels[i]+"."+k.name] = text
		}
	}
	r, err := NewRegistry(rc)
	if err != nil {
		return Config{}, err
	}
	l, err := r.Limiter("orders", Site{Config: "backend", Attrs: attrs})
	if err != nil {
		return Config{}, err
	}
	return l.cfg, nil
}

// Six valid values of each key, none its default, each unlike the one before, so that each
// level is seen to override the one below. A value in a Config level must not be zero.
var samples = map[string][]string{
	"algorithm":        {"aimd", "gradient2", "vegas", "lossdelay", "vegas", "gradient2"},
	"initialLimit":     {"11", "12", "13", "14", "15", "16"},
	"minLimit":         {"2", "3", "4", "5", "6", "7"},
	"maxLimit":         {"101", "102", "103", "104", "105", "106"},
	"window":           {"2s", "3s", "4s", "500ms", "6s", "1m0s"},
	"minWindowSamples": {"2", "3", "4", "5", "6", "7"},
	"subUnitFloor":     {"0.5", "0.25", "0.125", "0.01", "0.001", "0.0001"},
	"smoothing":        {"0.1", "0.3", "0.4", "0.5", "0.6", "1"},
	"rttTolerance":     {"1.1", "1.2", "1.3", "1.4", "2", "3"},
	"longWindow":       {"11", "12", "13", "14", "15", "16"},
	"queueSize":        {"2", "3", "5", "6", "7", "8"},
	"backoffRatio":     {"0.5", "0.6", "0.7", "0.8", "0.85", "0.95"},
	"lossThreshold":    {"0.02", "0.03", "0.04", "0.05", "0.5", "0.001"},
	"delayTolerance":   {"1.1", "1.2", "1.3", "1.4", "2", "3"},
	"increaseRatio":    {"0.1", "0.3", "0.4", "0.5", "0.6", "1"},
	"probeInterval":    {"10", "20", "30", "40", "50", "60"},
	"relearnAfter":     {"2", "3", "4", "6", "7", "8"},
	"latencyCeiling":   {"10ms", "20ms", "30ms", "40ms", "50ms", "1s"},
	"alpha":            {"1", "2", "3", "4", "5", "6"},
	"beta":             {"11", "12", "13", "14", "15", "16"},
	"probeMultiplier":  {"2", "3", "4", "5", "6", "7"},
	"maxWait":          {"1s", "2s", "3s", "4s", "5s", "6s"},
	"maxWaiters":       {"1", "2", "3", "4", "5", "6"},
	"waitOrder":        {"lifo", "fifo", "lifo", "fifo", "lifo", "fifo"},
	"classes": {"a:0.5,b:0", "critical:0.3,standard:0.4,sheddable:0", "x:1", "a:0,b:0,c:0",
		"high:0.25,low:0.75", "only:0.1"},
	"enabled": {"false", "true", "false", "true", "false", "true"},
	"dryRun":  {"true", "false", "true", "false", "true", "false"},
}

// For each key, set at each level with every level below it set too, the highest wins; with
// none set, the built-in default holds.
func TestPrecedence(t *testing.T) {
	def, err := Config{}.resolved()
	require.NoError(t, err)
	for i := range keys {
		k := &keys[i]
		values, ok := samples[k.name]
		require.True(t, ok, "samples needs six valid values of %s", k.name)
		c, err := resolveAt(k, nil)
		require.NoError(t, err)
		require.Equal(t, k.format(&def), k.format(&c), "%s: built-in default", k.name)
		for w := range levels {
			c, err := resolveAt(k, values[:w+1])
			require.NoError(t, err, "%s at %s", k.name, levels[w])
			require.Equal(t, values[w], k.format(&c), "%s: %s should win", k.name, levels[w])
		}
	}
}

// An external key sets what it says, zero and false included; a zero field of a Config is
// unset.
func TestExternalZeroWins(t *testing.T) {
	r, err := NewRegistry(RegistryConfig{
		Defaults: Config{DryRun: true, MaxLimit: 50},
		Configs:  map[string]Config{"backend": {DryRun: true}},
		Properties: map[string]string{
			"configs.backend.adaptiveLimit.dryRun":   "false",
			"instances.orders.adaptiveLimit.enabled": "true",
		},
	})
	require.NoError(t, err)
	l, err := r.Limiter("orders", Site{Config: "backend", Attrs: Config{Disabled: true, MaxLimit: 0}})
	require.NoError(t, err)
	s := l.Snapshot()
	require.False(t, s.Disabled)
	require.False(t, s.DryRun)
	require.Equal(t, 50, s.MaxLimit)

	for key, code := range map[string]string{"maxLimit": "R4C-ATR-003", "window": "R4C-ATR-009", "smoothing": "R4C-REG-001"} {
		text := "0"
		if key == "window" {
			text = "0s"
		}
		_, err := NewRegistry(RegistryConfig{Properties: map[string]string{"instances.x.adaptiveLimit." + key: text}})
		requireConfigError(t, err, code, "instances.x.adaptiveLimit."+key, text)
	}
}

func requireConfigError(t *testing.T, err error, code, key string, value any) *ConfigError {
	t.Helper()
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, code, ce.Code(), err.Error())
	require.ErrorIs(t, err, ce.Unwrap())
	require.True(t, strings.HasPrefix(ce.Unwrap().Error(), code))
	require.Equal(t, key, ce.Key, err.Error())
	require.Equal(t, value, ce.Value, err.Error())
	require.Contains(t, err.Error(), code)
	return ce
}

// Each code that a Config can cause, from each Config level, and each code that a key can
// cause, from each external level: the error names the key as its level spells it.
func TestErrorCodesFromCodeAndKeys(t *testing.T) {
	fromCode := []struct {
		c     Config
		code  string
		key   string
		value any
	}{
		{Config{MinLimit: -1}, "R4C-ATR-003", "minLimit", -1},
		{Config{MinLimit: 10, MaxLimit: 5}, "R4C-ATR-009", "minLimit", 10},
		{Config{Window: 2 * time.Hour}, "R4C-ATR-009", "window", 2 * time.Hour},
		{Config{Smoothing: 2}, "R4C-REG-001", "smoothing", 2.0},
		{Config{Algorithm: 9}, "R4C-REG-001", "algorithm", Algorithm(9)},
	}
	for _, tc := range fromCode {
		_, err := NewRegistry(RegistryConfig{Defaults: tc.c})
		requireConfigError(t, err, tc.code, "Defaults."+tc.key, tc.value)
		_, err = NewRegistry(RegistryConfig{Configs: map[string]Config{"backend": tc.c}})
		requireConfigError(t, err, tc.code, `Configs["backend"].`+tc.key, tc.value)
		r, err := NewRegistry(RegistryConfig{})
		require.NoError(t, err)
		_, err = r.Limiter("orders", Site{Attrs: tc.c})
		ce := requireConfigError(t, err, tc.code, "Attrs."+tc.key, tc.value)
		require.Equal(t, "orders", ce.Instance)
	}

	fromKeys := []struct{ key, text, code string }{
		{"minLimit", "0", "R4C-ATR-003"},
		{"maxLimit", "-3", "R4C-ATR-003"},
		{"initialLimit", "-2", "R4C-ATR-003"},
		{"window", "2h", "R4C-ATR-009"},
		{"window", "soon", "R4C-ATR-001"},
		{"smoothing", "2", "R4C-REG-001"},
		{"backoffRatio", "NaN", "R4C-REG-001"},
		{"algorithm", "netflix", "R4C-REG-001"},
		{"alpha", "-1", "R4C-REG-001"},
		{"probeMultiplier", "0", "R4C-REG-001"},
		{"maxLimt", "5", "R4C-REG-001"},
		{"enabled", "yes", "R4C-REG-001"},
	}
	for _, tc := range fromKeys {
		for _, level := range []string{"defaults.adaptiveLimit.", "configs.backend.adaptiveLimit.", "instances.orders.adaptiveLimit."} {
			text := "a=1\n\n" + level + tc.key + " = " + tc.text + "\n"
			props, err := ParseProperties(strings.NewReader(text))
			require.NoError(t, err)
			r, err := NewRegistry(RegistryConfig{Properties: props})
			require.Nil(t, r)
			ce := requireConfigError(t, err, tc.code, level+tc.key, tc.text)
			require.Equal(t, 3, ce.Line)
			require.Contains(t, err.Error(), "line 3: ")
		}
	}
}

func TestErrorMessages(t *testing.T) {
	props, err := ParseProperties(strings.NewReader("a=1\n\nconfigs.backend.adaptiveLimit.backoffRatio=2\n"))
	require.NoError(t, err)
	_, err = NewRegistry(RegistryConfig{Properties: props})
	require.EqualError(t, err, "R4C-REG-001: line 3: configs.backend.adaptiveLimit.backoffRatio = 2: must lie in [0.5, 1) and be finite")

	_, err = NewRegistry(RegistryConfig{Properties: map[string]string{"instances.q.adaptiveLimit.maxLimt": "4"}})
	require.EqualError(t, err, `R4C-REG-001: adaptive limit "q": instances.q.adaptiveLimit.maxLimt = 4: unknown key: `+
		"the keys under adaptiveLimit are "+keyNames())
}

// A key under adaptiveLimit must be known, in its exact spelling; the keys of other policies
// are not this package's.
func TestExternalKeyNames(t *testing.T) {
	r, err := NewRegistry(RegistryConfig{Properties: map[string]string{
		"instances.x.retry.maxAttempts":                       "many",
		"defaults.timeout.duration":                           "never",
		"adaptiveLimit.maxLimit":                              "4",
		"instances.com.example.Orders.adaptiveLimit.maxLimit": "4",
	}})
	require.NoError(t, err)
	l, err := r.Limiter("com.example.Orders", Site{})
	require.NoError(t, err)
	require.Equal(t, 4, l.Snapshot().MaxLimit)

	for _, key := range []string{
		"instances.x.adaptivelimit.maxLimit",
		"defaults.AdaptiveLimit.maxLimit",
		"instances.x.adaptiveLimit.MaxLimit",
		"instances.x.adaptiveLimit.max.limit",
		"instances.x.adaptiveLimit",
		"instances..adaptiveLimit.maxLimit",
		"configs.adaptiveLimit.maxLimit",
	} {
		_, err := NewRegistry(RegistryConfig{Properties: map[string]string{key: "4"}})
		requireConfigError(t, err, "R4C-REG-001", key, "4")
	}
}

// Nothing is half-applied: one bad key anywhere, and there is no registry.
func TestNewRegistryAllOrNothing(t *testing.T) {
	props := map[string]string{
		"defaults.adaptiveLimit.maxLimit":         "100",
		"configs.backend.adaptiveLimit.window":    "2s",
		"instances.orders.adaptiveLimit.minLimit": "5",
		"instances.zz.adaptiveLimit.queueSize":    "-1",
	}
	r, err := NewRegistry(RegistryConfig{Properties: props})
	require.Nil(t, r)
	requireConfigError(t, err, "R4C-REG-001", "instances.zz.adaptiveLimit.queueSize", "-1")
	delete(props, "instances.zz.adaptiveLimit.queueSize")
	r, err = NewRegistry(RegistryConfig{Properties: props})
	require.NoError(t, err)
	require.NotNil(t, r)
}

// Each level is checked on its own; where the levels' bounds meet is checked at the call site.
func TestBoundsOfSeveralLevels(t *testing.T) {
	props, err := ParseProperties(strings.NewReader("instances.orders.adaptiveLimit.minLimit=300\n"))
	require.NoError(t, err)
	r, err := NewRegistry(RegistryConfig{Properties: props})
	require.NoError(t, err)
	l, err := r.Limiter("orders", Site{Attrs: Config{MaxLimit: 500}})
	require.NoError(t, err)
	require.Equal(t, 300, l.Snapshot().MinLimit)

	r, err = NewRegistry(RegistryConfig{Properties: props})
	require.NoError(t, err)
	_, err = r.Limiter("orders", Site{})
	ce := requireConfigError(t, err, "R4C-ATR-009", "instances.orders.adaptiveLimit.minLimit", "300")
	require.Equal(t, 1, ce.Line)
	require.EqualError(t, err, `R4C-ATR-009: line 1: adaptive limit "orders": instances.orders.adaptiveLimit.minLimit = 300: must not exceed maxLimit (200)`)

	// Vegas's alpha and beta go together, and may come from different levels.
	props = map[string]string{"configs.vegas.adaptiveLimit.beta": "9", "instances.orders.adaptiveLimit.alpha": "4"}
	r, err = NewRegistry(RegistryConfig{Properties: props})
	require.NoError(t, err)
	l, err = r.Limiter("orders", Site{Config: "vegas"})
	require.NoError(t, err)
	require.Equal(t, [2]int{4, 9}, [2]int{l.cfg.Alpha, l.cfg.Beta})
	_, err = r.Limiter("other", Site{Name: "orders"})
	requireConfigError(t, err, "R4C-REG-001", "beta", 0)
	r, err = NewRegistry(RegistryConfig{Properties: map[string]string{"instances.orders.adaptiveLimit.alpha": "4", "instances.orders.adaptiveLimit.beta": "3"}})
	require.Nil(t, r)
	requireConfigError(t, err, "R4C-REG-001", "instances.orders.adaptiveLimit.beta", "3")

	r, err = NewRegistry(RegistryConfig{Defaults: Config{InitialLimit: 50}})
	require.NoError(t, err)
	_, err = r.Limiter("orders", Site{Attrs: Config{MaxLimit: 10}})
	requireConfigError(t, err, "R4C-ATR-009", "Defaults.initialLimit", 50)
}

func TestSharing(t *testing.T) {
	r, err := NewRegistry(RegistryConfig{Configs: map[string]Config{"backend": {MaxLimit: 100}}})
	require.NoError(t, err)
	place, err := r.Limiter("OrderClient.place", Site{Name: "orders", Config: "backend"})
	require.NoError(t, err)
	cancel, err := r.Limiter("OrderClient.cancel", Site{Name: "orders", Attrs: Config{MaxLimit: 100, Window: time.Second}})
	require.NoError(t, err)
	require.Same(t, place, cancel)
	require.Equal(t, "orders", place.Snapshot().Name)
	got, err := r.Get("orders")
	require.NoError(t, err)
	require.Same(t, place, got)
	own, err := r.Limiter("OrderClient.list", Site{})
	require.NoError(t, err)
	require.NotSame(t, place, own)
	require.Equal(t, "OrderClient.list", own.Snapshot().Name)

	_, err = r.Get("OrderClient.place")
	requireConfigError(t, err, "R4C-REG-009", "id", "OrderClient.place")
	require.ErrorIs(t, err, ErrUnknownInstance)

	_, err = r.Limiter("x", Site{Config: "frontend"})
	requireConfigError(t, err, "R4C-REG-004", "config", "frontend")
	require.ErrorIs(t, err, ErrUnknownConfig)
	require.EqualError(t, err, `R4C-REG-004: adaptive limit "x": config = frontend: no configuration has this name; there are: backend`)

	_, err = r.Limiter("", Site{})
	requireConfigError(t, err, "R4C-REG-001", "id", `""`)
}

func TestSharingConflict(t *testing.T) {
	props := map[string]string{
		"configs.backend.adaptiveLimit.maxLimit":     "100",
		"configs.backend.adaptiveLimit.backoffRatio": "0.8",
		"configs.other.adaptiveLimit.maxLimit":       "100",
		"configs.other.adaptiveLimit.backoffRatio":   "0.7",
	}
	r, err := NewRegistry(RegistryConfig{Properties: props})
	require.NoError(t, err)
	_, err = r.Limiter("OrderClient.place", Site{Name: "orders", Config: "backend"})
	require.NoError(t, err)

	// From code: the call site's attributes.
	_, err = r.Limiter("OrderClient.cancel", Site{Name: "orders", Attrs: Config{MaxLimit: 50}})
	requireConfigError(t, err, "R4C-REG-008", "maxLimit, backoffRatio", "50, 0.9")
	require.ErrorIs(t, err, ErrConfigConflict)
	require.EqualError(t, err, `R4C-REG-008: adaptive limit "orders": maxLimit, backoffRatio = 50, 0.9: `+
		`call site "OrderClient.cancel" resolves to this, but the limiter shared under this name has 100, 0.8`)

	// From keys: another named configuration.
	_, err = r.Limiter("OrderClient.list", Site{Name: "orders", Config: "other"})
	requireConfigError(t, err, "R4C-REG-008", "backoffRatio", "0.7")
	require.Len(t, r.Snapshot(), 1)
}

func classify(err error) bool { return err != nil }

// Callbacks are the same when they run the same function.
func TestSharingCallbacks(t *testing.T) {
	r, err := NewRegistry(RegistryConfig{})
	require.NoError(t, err)
	var hooks []func(string, Decision)
	for n := range 2 {
		hooks = append(hooks, func(string, Decision) { _ = n }) // one literal, two closures
	}
	hook := func(n int) func(string, Decision) { return hooks[n-1] }
	a, err := r.Limiter("a", Site{Name: "orders", Attrs: Config{DropOn: classify, OnLimitChange: hook(1)}})
	require.NoError(t, err)
	b, err := r.Limiter("b", Site{Name: "orders", Attrs: Config{DropOn: classify, OnLimitChange: hook(2)}})
	require.NoError(t, err)
	require.Same(t, a, b)

	_, err = r.Limiter("c", Site{Name: "orders", Attrs: Config{OnLimitChange: hook(1)}})
	ce := requireConfigError(t, err, "R4C-REG-008", "dropOn", "github.com/resilience4cata/adaptivelimit.DefaultDropOn")
	require.Contains(t, ce.Rule, "has github.com/resilience4cata/adaptivelimit.classify")

	_, err = r.Limiter("d", Site{Name: "orders", Attrs: Config{DropOn: classify, OnLimitChange: hook(1), Clock: NewManualClock()}})
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "clock", ce.Key)
	require.Contains(t, ce.Value, "*adaptivelimit.ManualClock(0x")
	require.Contains(t, ce.Rule, "has adaptivelimit.") // TickClock()
}

// The registry's clock is every limiter's, whatever the levels say.
func TestRegistryClock(t *testing.T) {
	clock := NewManualClock()
	r, err := NewRegistry(RegistryConfig{Clock: clock, Defaults: Config{Clock: TimeClock()}})
	require.NoError(t, err)
	l, err := r.Limiter("orders", Site{Attrs: Config{Clock: NewManualClock(), MinWindowSamples: 1}})
	require.NoError(t, err)
	require.Same(t, clock, l.cfg.Clock)

	p, err := l.Acquire()
	require.NoError(t, err)
	clock.Advance(time.Second)
	p.Done(nil)
	require.Equal(t, uint64(1), l.Snapshot().Windows)
	require.Equal(t, time.Second, l.Snapshot().WindowLatency)

	r, err = NewRegistry(RegistryConfig{Defaults: Config{Clock: clock}})
	require.NoError(t, err)
	l, err = r.Limiter("orders", Site{})
	require.NoError(t, err)
	require.Same(t, clock, l.cfg.Clock)
}

func TestRegistrySnapshotSorted(t *testing.T) {
	r, err := NewRegistry(RegistryConfig{})
	require.NoError(t, err)
	require.Empty(t, r.Snapshot())
	for _, id := range []string{"search", "orders", "users", "billing"} {
		_, err := r.Limiter(id, Site{})
		require.NoError(t, err)
	}
	var names []string
	for _, s := range r.Snapshot() {
		names = append(names, s.Name)
	}
	require.Equal(t, []string{"billing", "orders", "search", "users"}, names)
}

// Call sites racing for one id get one limiter.
func TestRegistryConcurrentLimiter(t *testing.T) {
	r, err := NewRegistry(RegistryConfig{Properties: map[string]string{"instances.orders.adaptiveLimit.maxLimit": "64"}})
	require.NoError(t, err)
	const n = 32
	got := make([]*Limiter, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			got[i], errs[i] = r.Limiter("orders", Site{})
			r.Snapshot()
		})
	}
	close(start)
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	for _, l := range got {
		require.Same(t, got[0], l)
	}
	require.Len(t, r.Snapshot(), 1)
	require.Equal(t, 64, got[0].Snapshot().MaxLimit)
}
