package adaptivelimit

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestConfigDefaults(t *testing.T) {
	c, err := Config{}.resolved()
	require.NoError(t, err)
	require.Equal(t, defaultName, c.Name)
	require.Equal(t, Gradient2, c.Algorithm)
	require.Equal(t, 20, c.InitialLimit)
	require.Equal(t, 1, c.MinLimit)
	require.Equal(t, 200, c.MaxLimit)
	require.Equal(t, time.Second, c.Window)
	require.Equal(t, 10, c.MinWindowSamples)
	require.Equal(t, 0.2, c.Smoothing)
	require.Equal(t, 1.5, c.RTTTolerance)
	require.Equal(t, 600, c.LongWindow)
	require.Equal(t, 4, c.QueueSize)
	require.Equal(t, 0.9, c.BackoffRatio)
	require.Zero(t, c.Alpha)
	require.Zero(t, c.Beta)
	require.Equal(t, 30, c.ProbeMultiplier)
	require.NotNil(t, c.Random)
	require.Zero(t, c.MaxWait, "fail fast")
	require.Zero(t, c.MaxWaiters, "the limit at the moment")
	require.Equal(t, FIFO, c.WaitOrder)
	require.NotNil(t, c.DropOn)
	require.NotNil(t, c.Clock)
}

// An unset Smoothing is the algorithm's own default; a set one is kept.
func TestSmoothingDefaultFollowsAlgorithm(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want float64
	}{
		{Config{}, 0.2},
		{Config{Algorithm: Gradient2}, 0.2},
		{Config{Algorithm: AIMD}, 0.2},
		{Config{Algorithm: Vegas}, 1},
		{Config{Algorithm: Vegas, Smoothing: 0.4}, 0.4},
		{Config{Algorithm: Gradient2, Smoothing: 0.4}, 0.4},
	} {
		c, err := tc.c.resolved()
		require.NoError(t, err)
		require.Equal(t, tc.want, c.Smoothing, "%v", tc.c.Algorithm)
	}
}

// The default Random is uniform in [0, 1).
func TestDefaultRandom(t *testing.T) {
	c, err := Config{}.resolved()
	require.NoError(t, err)
	var sum float64
	for range 10000 {
		x := c.Random()
		require.GreaterOrEqual(t, x, 0.0)
		require.Less(t, x, 1.0)
		sum += x
	}
	require.InDelta(t, 0.5, sum/10000, 0.05)
}

// An unset InitialLimit follows the bounds it is given; a set one must lie within them.
func TestInitialLimitDefaultFollowsBounds(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want int
	}{
		{Config{MaxLimit: 10}, 10},
		{Config{MinLimit: 50}, 50},
		{Config{MinLimit: 5, MaxLimit: 100}, 20},
	} {
		c, err := tc.c.resolved()
		require.NoError(t, err)
		require.Equal(t, tc.want, c.InitialLimit)
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		c        Config
		code     string
		sentinel error
		message  string
	}{
		{Config{MinLimit: -1}, "R4C-ATR-003", ErrBoundBelowOne, `R4C-ATR-003: adaptive limit "orders": minLimit = -1: a limit bound must be at least 1`},
		{Config{MaxLimit: -5}, "R4C-ATR-003", ErrBoundBelowOne, "maxLimit = -5: a limit bound must be at least 1"},
		{Config{InitialLimit: -2}, "R4C-ATR-003", ErrBoundBelowOne, "initialLimit = -2: the initial limit must be at least 1"},
		{Config{MaxLimit: math.MaxInt}, "R4C-ATR-009", ErrOutOfRange, fmt.Sprintf("maxLimit = %d: a limit bound must not exceed 16777216", math.MaxInt)},
		{Config{MaxLimit: maxLimitValue + 1}, "R4C-ATR-009", ErrOutOfRange, "maxLimit = 16777217: a limit bound must not exceed 16777216"},
		{Config{MinLimit: maxLimitValue + 1}, "R4C-ATR-009", ErrOutOfRange, "minLimit = 16777217: a limit bound must not exceed 16777216"},
		{Config{InitialLimit: math.MaxInt, MaxLimit: math.MaxInt}, "R4C-ATR-009", ErrOutOfRange, fmt.Sprintf("initialLimit = %d:", math.MaxInt)},
		{Config{MaxLimit: math.MaxInt}, "R4C-ATR-009", ErrOutOfRange, fmt.Sprintf("maxLimit = %d:", math.MaxInt)},
		{Config{InitialLimit: maxLimitValue + 1}, "R4C-ATR-009", ErrOutOfRange, "initialLimit = 16777217: the initial limit must not exceed 16777216"},
		{Config{MinLimit: 10, MaxLimit: 5}, "R4C-ATR-009", ErrOutOfRange, "minLimit = 10: must not exceed maxLimit (5)"},
		{Config{MinLimit: 300}, "R4C-ATR-009", ErrOutOfRange, "minLimit = 300: must not exceed maxLimit (200)"},
		{Config{InitialLimit: 500}, "R4C-ATR-009", ErrOutOfRange, "initialLimit = 500: must lie in [minLimit, maxLimit] = [1, 200]"},
		{Config{InitialLimit: 3, MinLimit: 4}, "R4C-ATR-009", ErrOutOfRange, "initialLimit = 3: must lie in [minLimit, maxLimit] = [4, 200]"},
		{Config{Window: time.Microsecond}, "R4C-ATR-009", ErrOutOfRange, "window = 1µs: must lie in [1ms, 1h]"},
		{Config{Window: 2 * time.Hour}, "R4C-ATR-009", ErrOutOfRange, "window = 2h0m0s: must lie in [1ms, 1h]"},
		{Config{Window: -time.Second}, "R4C-ATR-009", ErrOutOfRange, "window = -1s"},
		{Config{MinWindowSamples: -1}, "R4C-REG-001", ErrInvalidTuning, `R4C-REG-001: adaptive limit "orders": minWindowSamples = -1: must lie in [1, 1000000]`},
		{Config{MinWindowSamples: maxMinWindowSamples + 1}, "R4C-REG-001", ErrInvalidTuning, "minWindowSamples = 1000001: must lie in [1, 1000000]"},
		{Config{LongWindow: -600}, "R4C-REG-001", ErrInvalidTuning, "longWindow = -600: must lie in [1, 1000000]"},
		{Config{LongWindow: math.MaxInt}, "R4C-REG-001", ErrInvalidTuning, fmt.Sprintf("longWindow = %d: must lie in [1, 1000000]", math.MaxInt)},
		{Config{QueueSize: -4}, "R4C-REG-001", ErrInvalidTuning, "queueSize = -4: must lie in [1, 16777216]"},
		{Config{QueueSize: math.MaxInt}, "R4C-REG-001", ErrInvalidTuning, fmt.Sprintf("queueSize = %d: must lie in [1, 16777216]", math.MaxInt)},
		{Config{Smoothing: 1.5}, "R4C-REG-001", ErrInvalidTuning, "smoothing = 1.5: must lie in (0, 1] and be finite"},
		{Config{Smoothing: -0.1}, "R4C-REG-001", ErrInvalidTuning, "smoothing = -0.1"},
		{Config{Smoothing: math.NaN()}, "R4C-REG-001", ErrInvalidTuning, "smoothing = NaN"},
		{Config{RTTTolerance: 0.5}, "R4C-REG-001", ErrInvalidTuning, "rttTolerance = 0.5: must be at least 1 and be finite"},
		{Config{RTTTolerance: math.Inf(1)}, "R4C-REG-001", ErrInvalidTuning, "rttTolerance = +Inf"},
		{Config{RTTTolerance: math.NaN()}, "R4C-REG-001", ErrInvalidTuning, "rttTolerance = NaN"},
		{Config{BackoffRatio: 1}, "R4C-REG-001", ErrInvalidTuning, "backoffRatio = 1: must lie in [0.5, 1) and be finite"},
		{Config{BackoffRatio: 0.4}, "R4C-REG-001", ErrInvalidTuning, "backoffRatio = 0.4"},
		{Config{BackoffRatio: math.Inf(-1)}, "R4C-REG-001", ErrInvalidTuning, "backoffRatio = -Inf"},
		{Config{Algorithm: 7}, "R4C-REG-001", ErrInvalidTuning, "algorithm = Algorithm(7): must be gradient2, aimd, vegas or lossdelay"},
		{Config{LossThreshold: -0.01}, "R4C-REG-001", ErrInvalidTuning, "lossThreshold = -0.01: must lie in (0, 1) and be finite"},
		{Config{LossThreshold: 1}, "R4C-REG-001", ErrInvalidTuning, "lossThreshold = 1: must lie in (0, 1)"},
		{Config{LossThreshold: math.NaN()}, "R4C-REG-001", ErrInvalidTuning, "lossThreshold = NaN"},
		{Config{DelayTolerance: 0.9}, "R4C-REG-001", ErrInvalidTuning, "delayTolerance = 0.9: must be at least 1 and be finite"},
		{Config{DelayTolerance: math.Inf(1)}, "R4C-REG-001", ErrInvalidTuning, "delayTolerance = +Inf"},
		{Config{IncreaseRatio: 1.5}, "R4C-REG-001", ErrInvalidTuning, "increaseRatio = 1.5: must lie in (0, 1]"},
		{Config{ProbeInterval: -1}, "R4C-REG-001", ErrInvalidTuning, "probeInterval = -1: must lie in [0, 1000000]"},
		{Config{ProbeInterval: maxWindows + 1}, "R4C-REG-001", ErrInvalidTuning, "probeInterval = 1000001: must lie in [0, 1000000]"},
		{Config{RelearnAfter: -1}, "R4C-REG-001", ErrInvalidTuning, "relearnAfter = -1: must lie in [1, 1000000]"},
		{Config{RelearnAfter: math.MaxInt}, "R4C-REG-001", ErrInvalidTuning, fmt.Sprintf("relearnAfter = %d: must lie in [1, 1000000]", math.MaxInt)},
		{Config{LatencyCeiling: -time.Millisecond}, "R4C-REG-001", ErrInvalidTuning, "latencyCeiling = -1ms: must not be negative"},
		{Config{Algorithm: Vegas, Smoothing: 2}, "R4C-REG-001", ErrInvalidTuning, "smoothing = 2: must lie in (0, 1] and be finite"},
		{Config{Alpha: -1, Beta: 6}, "R4C-REG-001", ErrInvalidTuning, "alpha = -1: must be at least 1, set with beta, or both 0 for the defaults"},
		{Config{Beta: 6}, "R4C-REG-001", ErrInvalidTuning, "alpha = 0: must be at least 1, set with beta"},
		{Config{Alpha: 3}, "R4C-REG-001", ErrInvalidTuning, "beta = 0: must exceed alpha (3), or both be 0 for the defaults"},
		{Config{Alpha: 3, Beta: 3}, "R4C-REG-001", ErrInvalidTuning, "beta = 3: must exceed alpha (3)"},
		{Config{Alpha: 4, Beta: -6}, "R4C-REG-001", ErrInvalidTuning, "beta = -6: must exceed alpha (4)"},
		{Config{ProbeMultiplier: -30}, "R4C-REG-001", ErrInvalidTuning, "probeMultiplier = -30: must lie in [1, 1000000]"},
		{Config{MaxWait: -time.Second}, "R4C-ATR-009", ErrOutOfRange, `R4C-ATR-009: adaptive limit "orders": maxWait = -1s: must not be negative`},
		{Config{MaxWaiters: -1}, "R4C-REG-001", ErrInvalidTuning, `R4C-REG-001: adaptive limit "orders": maxWaiters = -1: must not be negative`},
		{Config{WaitOrder: 7}, "R4C-REG-001", ErrInvalidTuning, "waitOrder = WaitOrder(7): must be fifo or lifo"},
		{Config{ProbeMultiplier: math.MaxInt}, "R4C-REG-001", ErrInvalidTuning, fmt.Sprintf("probeMultiplier = %d: must lie in [1, 1000000]", math.MaxInt)},
		{Config{Alpha: 3, Beta: math.MaxInt}, "R4C-REG-001", ErrInvalidTuning, fmt.Sprintf("beta = %d: must not exceed 16777216", math.MaxInt)},
	}
	for _, tc := range cases {
		t.Run(tc.message, func(t *testing.T) {
			tc.c.Name = "orders"
			l, err := New(tc.c)
			require.Nil(t, l)
			require.ErrorIs(t, err, tc.sentinel)
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, tc.code, ce.Code())
			require.Contains(t, err.Error(), tc.message)
			require.Contains(t, err.Error(), tc.code)
			require.Equal(t, "orders", ce.Instance)
		})
	}
}

// The ceilings themselves are valid.
func TestConfigCeilings(t *testing.T) {
	_, err := New(Config{InitialLimit: maxLimitValue, MinLimit: maxLimitValue, MaxLimit: maxLimitValue,
		QueueSize: maxQueueSize, MinWindowSamples: maxMinWindowSamples, LongWindow: maxWindows,
		ProbeMultiplier: maxProbeMultiplier, ProbeInterval: maxWindows, RelearnAfter: maxWindows,
		Alpha: maxQueueSize - 1, Beta: maxQueueSize})
	require.NoError(t, err)
}

func TestAlgorithmString(t *testing.T) {
	require.Equal(t, "gradient2", Gradient2.String())
	require.Equal(t, "aimd", AIMD.String())
	require.Equal(t, "vegas", Vegas.String())
	require.Equal(t, "default", Algorithm(0).String())
}

func TestWaitOrderString(t *testing.T) {
	require.Equal(t, "fifo", FIFO.String())
	require.Equal(t, "lifo", LIFO.String())
	require.Equal(t, "WaitOrder(-1)", WaitOrder(-1).String())
}

// New reports the first invalid field in the order of the configuration reference's table
// (keys): of any two invalid fields, the one listed first. docs/configuration.md says so.
func TestConfigErrorsInTableOrder(t *testing.T) {
	invalid := map[string]func(*Config){ // a value of each key's field that New refuses
		"algorithm":        func(c *Config) { c.Algorithm = 9 },
		"initialLimit":     func(c *Config) { c.InitialLimit = -1 },
		"minLimit":         func(c *Config) { c.MinLimit = -1 },
		"maxLimit":         func(c *Config) { c.MaxLimit = -1 },
		"window":           func(c *Config) { c.Window = time.Microsecond },
		"minWindowSamples": func(c *Config) { c.MinWindowSamples = -1 },
		"subUnitFloor":     func(c *Config) { c.SubUnitFloor = 2 },
		"smoothing":        func(c *Config) { c.Smoothing = 2 },
		"rttTolerance":     func(c *Config) { c.RTTTolerance = 0.5 },
		"longWindow":       func(c *Config) { c.LongWindow = -1 },
		"queueSize":        func(c *Config) { c.QueueSize = -1 },
		"backoffRatio":     func(c *Config) { c.BackoffRatio = 0.1 },
		"lossThreshold":    func(c *Config) { c.LossThreshold = 2 },
		"delayTolerance":   func(c *Config) { c.DelayTolerance = 0.5 },
		"increaseRatio":    func(c *Config) { c.IncreaseRatio = 2 },
		"probeInterval":    func(c *Config) { c.ProbeInterval = -1 },
		"relearnAfter":     func(c *Config) { c.RelearnAfter = -1 },
		"latencyCeiling":   func(c *Config) { c.LatencyCeiling = -time.Millisecond },
		"alpha":            func(c *Config) { c.Alpha = -1 },
		"beta":             func(c *Config) { c.Alpha, c.Beta = 2, 1 },
		"probeMultiplier":  func(c *Config) { c.ProbeMultiplier = -1 },
		"maxWait":          func(c *Config) { c.MaxWait = -time.Second },
		"maxWaiters":       func(c *Config) { c.MaxWaiters = -1 },
		"waitOrder":        func(c *Config) { c.WaitOrder = 7 },
		"classes":          func(c *Config) { c.Classes = []Class{{Name: ""}} },
	}
	var order []string // the keys with an invalid value, in the table's order
	for _, k := range keys {
		if invalid[k.name] != nil {
			order = append(order, k.name)
		} else {
			require.Contains(t, []string{"enabled", "dryRun"}, k.name, "a key without an invalid value here")
		}
	}
	require.Len(t, order, len(invalid), "every invalid value is of a key")
	reported := func(names ...string) string {
		var c Config
		for i := len(names) - 1; i >= 0; i-- { // the first one's value last: alpha's over beta's
			invalid[names[i]](&c)
		}
		_, err := New(c)
		var ce *ConfigError
		require.ErrorAs(t, err, &ce, "%v", names)
		return ce.Key
	}
	for i, first := range order {
		require.Equal(t, first, reported(first))
		for _, later := range order[i+1:] {
			require.Equal(t, first, reported(first, later), "%s and %s invalid", first, later)
		}
	}
	// The case: smoothing is listed before longWindow.
	_, err := New(Config{Smoothing: 2, LongWindow: -1})
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "smoothing", ce.Key)
}
