package adaptivelimit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/resilience4cata/adaptivelimit/internal/names"
)

// Algorithm selects how a limiter moves its limit after each window.
type Algorithm int

const (
	// Gradient2 follows latency: it grows the limit while a window's latency stays near the
	// long-term latency and shrinks it in proportion when latency rises. The zero Algorithm
	// is unset, and means Gradient2.
	Gradient2 Algorithm = iota + 1
	// AIMD ignores latency: it backs off by BackoffRatio after a window with a drop and grows
	// by one after a window without one.
	AIMD
	// Vegas follows the queue that latency shows above the lowest latency seen: it grows the
	// limit while the queue is short, shrinks it when the queue is long or a call is dropped.
	Vegas
	// LossDelay follows both: it backs off when over LossThreshold of a window's calls drop,
	// else cuts by the share of latency queued above the no-load latency, and grows less than
	// in proportion, so that a fleet's limiters converge to equal shares. An overload's latency
	// never becomes normal, and a tail of timeouts does not hold it down (docs/algorithms.md).
	LossDelay
)

func (a Algorithm) String() string {
	switch a {
	case 0:
		return "default"
	case Gradient2:
		return "gradient2"
	case AIMD:
		return "aimd"
	case Vegas:
		return "vegas"
	case LossDelay:
		return "lossdelay"
	}
	return fmt.Sprintf("Algorithm(%d)", int(a))
}

// Config describes a limiter. A zero field means "unset" and takes the default in its
// comment, so that configurations can be merged field by field.
type Config struct {
	Name      string    // the instance id, used in errors and snapshots; default "adaptivelimit"
	Algorithm Algorithm // default Gradient2

	InitialLimit     int           // default 20, clamped into [MinLimit, MaxLimit] when unset
	MinLimit         int           // default 1
	MaxLimit         int           // default 200; at most 16,777,216 (1<<24)
	Window           time.Duration // default 1s; from 1ms to 1h
	MinWindowSamples int           // default 10; at most 1,000,000

	// SubUnitFloor turns limits below one call in flight on or off, and is the lowest such
	// limit: below 1 a limiter admits one call at a time, at the pace that Little's law gives
	// (docs/algorithms.md). 0, the default, turns them on for LossDelay at 1/1024 where
	// MinLimit is 1, without Classes and without MaxWait, and off otherwise; 1 turns them off.
	// A value in [1/65536, 1) turns them on at that floor, for LossDelay in those conditions;
	// Gradient2, AIMD and Vegas, which follow Netflix's, ignore it.
	SubUnitFloor float64

	Smoothing    float64 // Gradient2 and Vegas: default 0.2 (Gradient2) or 1 (Vegas), in (0, 1]
	RTTTolerance float64 // Gradient2: default 1.5, at least 1
	LongWindow   int     // Gradient2: windows in the long-term average; default 600, at most 1,000,000
	QueueSize    int     // Gradient2: default 4; at most 16,777,216
	BackoffRatio float64 // AIMD and LossDelay: default 0.9, in [0.5, 1)

	LossThreshold  float64       // LossDelay: the share of drops above which a window backs off; default 0.01, in (0, 1)
	DelayTolerance float64       // LossDelay: latency above this many times the baseline is congestion; default 1.08, at least 1
	IncreaseRatio  float64       // LossDelay: an uncongested window grows the limit by this share; default 0.2, in (0, 1]
	ProbeInterval  int           // LossDelay: windows between probes of the no-load latency, jittered down by up to half; default 0, none after the first; at most 1,000,000
	RelearnAfter   int           // LossDelay: congested windows whose latency cuts do not bring down before the baseline is re-learnt; default 5, at most 1,000,000
	LatencyCeiling time.Duration // LossDelay: a window's mean latency above it counts as loss; default 0, none

	// Vegas grows the limit while the queue it reads from latency is below Alpha and shrinks
	// it above Beta. Set both, 1 <= Alpha < Beta <= 16,777,216, or neither for 3*log10root(limit)
	// and 6*log10root(limit), where log10root(n) = max(1, floor(log10(n))).
	Alpha int
	Beta  int
	// ProbeMultiplier: Vegas measures its no-load latency again every
	// jitter*ProbeMultiplier*limit windows, jitter in [0.5, 1). Default 30, at most 1,000,000.
	ProbeMultiplier int

	// Random returns numbers uniform in [0, 1) for Vegas's probe jitter (0.5 + Random()/2) and
	// LossDelay's ProbeInterval's, on the window closer: if shared, it must be safe for concurrent
	// use. Default: math/rand/v2's Float64; a seeded one on a ManualClock makes tests repeatable.
	Random func() float64

	// MaxWait is how long AcquireContext and Do wait for a slot where the limit is full.
	// Default 0: they reject at once, as Acquire does.
	MaxWait time.Duration
	// MaxWaiters is how many callers may wait at once; one more is rejected at once.
	// Default: the limit at that moment.
	MaxWaiters int
	// WaitOrder is the order in which waiters get freed slots. Default FIFO.
	WaitOrder WaitOrder

	// Classes are the priority classes of the calls, highest first, the lowest shed first
	// (see Class). Default none: every call is equal. At most MaxClasses.
	Classes []Class

	// DropOn reports whether a call's error means the dependency is overloaded (a drop, on
	// which all but Gradient2 back off: it reads the latency alone, so fast drops, a 503 or an
	// inner ErrLimitExceeded, raise its limit). Default DefaultDropOn. If it panics, the call's
	// slot is freed and the panic goes on.
	DropOn func(error) bool

	// Disabled admits every call and measures nothing.
	Disabled bool
	// DryRun computes the limit and counts the calls it would reject, but admits every call.
	// Disabled wins, so that the kill switch works whatever layer set DryRun.
	DryRun bool

	// Clock times calls and windows. Default: TickClock. If it panics while a call holds a
	// slot, the slot is freed and the panic goes on.
	Clock Clock

	// OnLimitChange is called, only when a window moves the limit, by its closer once the new
	// limit is in force. It may call the limiter but should not block: the next window cannot
	// close until it returns (no call waits). A panic goes on to the caller of the Done that
	// closed the window.
	OnLimitChange func(name string, d Decision)
}

// The defaults of the spec, which Config's comments state.
const (
	defaultName             = "adaptivelimit"
	defaultInitialLimit     = 20
	defaultMinLimit         = 1
	defaultMaxLimit         = 200
	defaultWindow           = time.Second
	defaultMinWindowSamples = 10
	defaultSmoothing        = 0.2 // Gradient2's
	defaultVegasSmoothing   = 1.0
	defaultRTTTolerance     = 1.5
	defaultLongWindow       = 600
	defaultQueueSize        = 4
	defaultBackoffRatio     = 0.9
	defaultProbeMultiplier  = 30
	defaultLossThreshold    = 0.01
	defaultDelayTolerance   = 1.08
	defaultIncreaseRatio    = 0.2
	defaultRelearnAfter     = 5
	defaultSubUnitFloor     = 1.0 / 1024 // LossDelay's: a fleet of 20,000 in front of a capacity of 25
	minSubUnitFloor         = 1.0 / 65536
)

// The largest values New accepts, which Config's comments state: a limit beyond maxLimitValue
// is none, and they keep what the algorithms compute exact in a float64, far from overflow.
const (
	maxLimitValue       = 1 << 24   // InitialLimit, MinLimit and MaxLimit: 16,777,216 calls
	maxQueueSize        = 1 << 24   // QueueSize, and Vegas's Alpha and Beta: no more than the largest limit
	maxMinWindowSamples = 1_000_000 // MinWindowSamples
	maxWindows          = 1_000_000 // LongWindow, ProbeInterval and RelearnAfter: 11 days of 1 s windows
	maxProbeMultiplier  = 1_000_000 // ProbeMultiplier
)

const (
	minWindow = time.Millisecond
	maxWindow = time.Hour
)

// resolved returns c withDefaults, or the error of its first invalid field (validate).
func (c Config) resolved() (Config, error) {
	c = c.withDefaults()
	c.Classes = slices.Clone(c.Classes) // the caller's slice may change after New
	return c, c.validate()
}

func (c Config) withDefaults() Config {
	setDefault(&c.Name, defaultName)
	setDefault(&c.Algorithm, Gradient2)
	setDefault(&c.MinLimit, defaultMinLimit)
	setDefault(&c.MaxLimit, defaultMaxLimit)
	initial := defaultInitialLimit
	if 1 <= c.MinLimit && c.MinLimit <= c.MaxLimit && c.MaxLimit <= maxLimitValue {
		initial = min(max(initial, c.MinLimit), c.MaxLimit) // else the bounds' error, not its
	}
	setDefault(&c.InitialLimit, initial)
	setDefault(&c.Window, defaultWindow)
	setDefault(&c.MinWindowSamples, defaultMinWindowSamples)
	if c.Algorithm == Vegas {
		setDefault(&c.Smoothing, defaultVegasSmoothing)
	} else {
		setDefault(&c.Smoothing, defaultSmoothing)
	}
	setDefault(&c.RTTTolerance, defaultRTTTolerance)
	setDefault(&c.LongWindow, defaultLongWindow)
	setDefault(&c.QueueSize, defaultQueueSize)
	setDefault(&c.BackoffRatio, defaultBackoffRatio)
	setDefault(&c.ProbeMultiplier, defaultProbeMultiplier)
	setDefault(&c.LossThreshold, defaultLossThreshold)
	setDefault(&c.DelayTolerance, defaultDelayTolerance)
	setDefault(&c.IncreaseRatio, defaultIncreaseRatio)
	setDefault(&c.RelearnAfter, defaultRelearnAfter)
	if c.Algorithm == LossDelay && c.MinLimit == 1 && len(c.Classes) == 0 && c.MaxWait == 0 {
		setDefault(&c.SubUnitFloor, defaultSubUnitFloor)
	}
	setDefault(&c.SubUnitFloor, 1)
	if c.Random == nil {
		c.Random = rand.Float64
	}
	if c.DropOn == nil {
		c.DropOn = DefaultDropOn
	}
	if c.Clock == nil {
		c.Clock = TickClock()
	}
	return c
}

// validate returns the error of the first invalid field of c, in the order of keys. It takes
// every field as it is: a zero is invalid, not unset, where 0 is out of range.
func (c Config) validate() error {
	v := validator{instance: c.Name}
	if !names.Name(c.Name) {
		v.fail("name", c.Name, names.NameRule, ErrInvalidTuning)
	}
	if c.Algorithm != Gradient2 && c.Algorithm != AIMD && c.Algorithm != Vegas && c.Algorithm != LossDelay {
		v.fail("algorithm", c.Algorithm, "must be gradient2, aimd, vegas or lossdelay", ErrInvalidTuning)
	}
	v.bound("initialLimit", c.InitialLimit, "the initial limit")
	v.bound("minLimit", c.MinLimit, "a limit bound")
	v.bound("maxLimit", c.MaxLimit, "a limit bound")
	if v.err == nil { // the bounds in order before initialLimit is judged against them
		if c.MinLimit > c.MaxLimit {
			v.fail("minLimit", c.MinLimit, fmt.Sprintf("must not exceed maxLimit (%d)", c.MaxLimit), ErrOutOfRange)
		} else if c.InitialLimit >= 1 && (c.InitialLimit < c.MinLimit || c.InitialLimit > c.MaxLimit) {
			v.fail("initialLimit", c.InitialLimit, fmt.Sprintf("must lie in [minLimit, maxLimit] = [%d, %d]", c.MinLimit, c.MaxLimit), ErrOutOfRange)
		}
	}
	if c.Window < minWindow || c.Window > maxWindow {
		v.fail("window", c.Window, "must lie in [1ms, 1h]", ErrOutOfRange)
	}
	v.count("minWindowSamples", c.MinWindowSamples, maxMinWindowSamples)
	v.subUnitFloor(c)
	v.tuning("smoothing", c.Smoothing, c.Smoothing > 0 && c.Smoothing <= 1, "must lie in (0, 1]")
	v.tuning("rttTolerance", c.RTTTolerance, c.RTTTolerance >= 1, "must be at least 1")
	v.count("longWindow", c.LongWindow, maxWindows)
	v.count("queueSize", c.QueueSize, maxQueueSize)
	v.tuning("backoffRatio", c.BackoffRatio, c.BackoffRatio >= 0.5 && c.BackoffRatio < 1, "must lie in [0.5, 1)")
	v.tuning("lossThreshold", c.LossThreshold, c.LossThreshold > 0 && c.LossThreshold < 1, "must lie in (0, 1)")
	v.tuning("delayTolerance", c.DelayTolerance, c.DelayTolerance >= 1, "must be at least 1")
	v.tuning("increaseRatio", c.IncreaseRatio, c.IncreaseRatio > 0 && c.IncreaseRatio <= 1, "must lie in (0, 1]")
	if c.ProbeInterval < 0 || c.ProbeInterval > maxWindows {
		v.fail("probeInterval", c.ProbeInterval, fmt.Sprintf("must lie in [0, %d]", maxWindows), ErrInvalidTuning)
	}
	v.count("relearnAfter", c.RelearnAfter, maxWindows)
	if c.LatencyCeiling < 0 {
		v.fail("latencyCeiling", c.LatencyCeiling, "must not be negative", ErrInvalidTuning)
	}
	v.vegasQueue(c.Alpha, c.Beta)
	v.count("probeMultiplier", c.ProbeMultiplier, maxProbeMultiplier)
	if c.MaxWait < 0 {
		v.fail("maxWait", c.MaxWait, "must not be negative", ErrOutOfRange)
	}
	if c.MaxWaiters < 0 {
		v.fail("maxWaiters", c.MaxWaiters, "must not be negative", ErrInvalidTuning)
	}
	if c.WaitOrder != FIFO && c.WaitOrder != LIFO {
		v.fail("waitOrder", c.WaitOrder, "must be fifo or lifo", ErrInvalidTuning)
	}
	v.classes(c.Classes)
	return v.err
}

func setDefault[T comparable](field *T, value T) {
	var zero T
	if *field == zero {
		*field = value
	}
}

type validator struct {
	instance string
	err      error
}

func (v *validator) fail(key string, value any, rule string, sentinel error) {
	if v.err == nil {
		v.err = &ConfigError{Instance: v.instance, Key: key, Value: value, Rule: rule, sentinel: sentinel}
	}
}

// bound checks a limit: what names it in the rule, as "a limit bound".
func (v *validator) bound(key string, value int, what string) {
	if value < 1 {
		v.fail(key, value, what+" must be at least 1", ErrBoundBelowOne)
	} else if value > maxLimitValue {
		v.fail(key, value, fmt.Sprintf("%s must not exceed %d", what, maxLimitValue), ErrOutOfRange)
	}
}

func (v *validator) count(key string, value, ceiling int) {
	if value < 1 || value > ceiling {
		v.fail(key, value, fmt.Sprintf("must lie in [1, %d]", ceiling), ErrInvalidTuning)
	}
}

// subUnitFloor checks SubUnitFloor. The other algorithms ignore it, as they ignore LossDelay's
// other tuning.
func (v *validator) subUnitFloor(c Config) {
	f := c.SubUnitFloor
	switch {
	case !(f >= minSubUnitFloor && f <= 1):
		v.fail("subUnitFloor", f, "must lie in [1/65536, 1], 1 for off, or be 0 for the default", ErrInvalidTuning)
	case f == 1 || c.Algorithm != LossDelay:
	case c.MinLimit != 1:
		v.fail("subUnitFloor", f, fmt.Sprintf("must be 1 (off) or 0 where minLimit (%d) is above 1", c.MinLimit), ErrInvalidTuning)
	case len(c.Classes) > 0:
		v.fail("subUnitFloor", f, "must be 1 (off) or 0 with classes", ErrInvalidTuning)
	case c.MaxWait > 0:
		v.fail("subUnitFloor", f, fmt.Sprintf("must be 1 (off) or 0 with maxWait (%v): a limit below 1 queues no waiters", c.MaxWait), ErrInvalidTuning)
	}
}

func (v *validator) vegasQueue(alpha, beta int) {
	switch {
	case alpha == 0 && beta == 0:
	case alpha < 1:
		v.fail("alpha", alpha, "must be at least 1, set with beta, or both 0 for the defaults", ErrInvalidTuning)
	case beta <= alpha:
		v.fail("beta", beta, fmt.Sprintf("must exceed alpha (%d), or both be 0 for the defaults", alpha), ErrInvalidTuning)
	case beta > maxQueueSize:
		v.fail("beta", beta, fmt.Sprintf("must not exceed %d", maxQueueSize), ErrInvalidTuning)
	}
}

// tuning checks a float: the comparisons in ok are false for NaN, and infinities are
// rejected here since every rule has a finite bound on at least one side.
func (v *validator) tuning(key string, value float64, ok bool, rule string) {
	if !ok || math.IsInf(value, 0) {
		v.fail(key, value, rule+" and be finite", ErrInvalidTuning)
	}
}
