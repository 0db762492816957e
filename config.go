package adaptivelimit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Algorithm selects how a limiter moves its limit after each window.
type Algorithm int

const (
	// AlgorithmDefault leaves the choice unset: it means Gradient2.
	AlgorithmDefault Algorithm = iota
	// Gradient2 follows latency: it grows the limit while a window's latency stays near the
	// long-term latency and shrinks it in proportion when latency rises.
	Gradient2
	// AIMD ignores latency: it backs off by BackoffRatio after a window with a drop and grows
	// by one after a window without one.
	AIMD
	// Vegas follows the queue that latency shows above the lowest latency seen: it grows the
	// limit while the queue is short, shrinks it when the queue is long or a call is dropped.
	Vegas
	// LossDelay follows both: it backs off when more than LossThreshold of a window's calls
	// are dropped, and otherwise cuts the limit by the share of the latency that queues above
	// the no-load latency, growing it by less than in proportion to itself, so that a fleet's
	// limiters converge to equal shares. Unlike Gradient2, it never takes an overload's
	// latency for normal; unlike AIMD, a tail of timeouts does not hold it down.
	LossDelay
)

func (a Algorithm) String() string {
	switch a {
	case AlgorithmDefault:
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
	MaxLimit         int           // default 200; at most LimitCeiling
	Window           time.Duration // default 1s; from 1ms to 1h
	MinWindowSamples int           // default 10; at most MinWindowSamplesCeiling

	Smoothing    float64 // Gradient2 and Vegas: default 0.2 (Gradient2) or 1 (Vegas), in (0, 1]
	RTTTolerance float64 // Gradient2: default 1.5, at least 1
	LongWindow   int     // Gradient2: windows in the long-term average; default 600, at most WindowsCeiling
	QueueSize    int     // Gradient2: default 4; at most QueueSizeCeiling
	BackoffRatio float64 // AIMD and LossDelay: default 0.9, in [0.5, 1)

	LossThreshold  float64       // LossDelay: the share of drops above which a window backs off; default 0.01, in (0, 1)
	DelayTolerance float64       // LossDelay: latency above this many times the baseline is congestion; default 1.08, at least 1
	IncreaseRatio  float64       // LossDelay: an uncongested window grows the limit by this share; default 0.2, in (0, 1]
	ProbeInterval  int           // LossDelay: windows between probes of the no-load latency, jittered down by up to half; default 0, none after the first; at most WindowsCeiling
	RelearnAfter   int           // LossDelay: congested windows whose latency cuts do not bring down before the baseline is re-learnt; default 5, at most WindowsCeiling
	LatencyCeiling time.Duration // LossDelay: a window's mean latency above it counts as loss; default 0, none

	// Vegas grows the limit while the queue it reads from latency is below Alpha and shrinks
	// it above Beta. Set both, Beta above Alpha, or neither: by default they follow the limit,
	// 3*log10root(limit) and 6*log10root(limit), where log10root(n) = max(1, floor(log10(n))).
	Alpha int
	Beta  int
	// ProbeMultiplier sets how often Vegas measures its no-load latency again: every
	// jitter*ProbeMultiplier*limit windows, jitter uniform in [0.5, 1). Default 30.
	ProbeMultiplier int

	// Random returns numbers uniform in [0, 1) for the algorithms that draw at random: Vegas
	// draws its probe jitter as 0.5 + Random()/2, LossDelay the jitter of its ProbeInterval. It is called by one goroutine at a time,
	// the one closing a window; a function shared by several limiters must be safe for
	// concurrent use. Default: math/rand/v2's Float64. Set it to a seeded source to make a
	// test on a ManualClock deterministic.
	Random func() float64

	// MaxWait is how long AcquireContext and Do wait for a slot where the limit is full.
	// Default 0: they reject at once, as Acquire does.
	MaxWait time.Duration
	// MaxWaiters is how many callers may wait at once; one more is rejected at once.
	// Default: the limit at that moment.
	MaxWaiters int
	// WaitOrder is the order in which waiters get freed slots. Default FIFO.
	WaitOrder WaitOrder

	// Classes are the priority classes of the calls, highest first (see Class): under
	// overload the limiter sheds the lowest class first, each class has the never-lent part
	// of its reserve at once, and what it lends comes back when it is turned away. Default
	// none: every call is equal. At most ClassesCeiling.
	Classes []Class

	// DropOn reports whether a call's error means the dependency is overloaded. Default
	// DefaultDropOn. If it panics, the call's slot is freed and the panic goes on.
	DropOn func(error) bool

	// Disabled admits every call and measures nothing.
	Disabled bool
	// DryRun computes the limit and counts the calls it would reject, but admits every call.
	// Disabled wins over it: disabling is the kill switch, and must work whatever level of a
	// layered configuration set DryRun.
	DryRun bool

	// Clock times calls and windows. Default: TickClock. If it panics while a call holds a
	// slot, the slot is freed and the panic goes on.
	Clock Clock

	// OnLimitChange is called when a window moves the limit, and only then, on the
	// goroutine that closed the window, after the new limit is in force. It should not
	// block: the next window cannot close until it returns, though no call waits for it. It
	// may call the limiter's methods. A panic in it goes on to the caller of the Done that
	// closed the window.
	OnLimitChange func(name string, d Decision)
}

// The defaults of the spec.
const (
	DefaultName             = "adaptivelimit"
	DefaultInitialLimit     = 20
	DefaultMinLimit         = 1
	DefaultMaxLimit         = 200
	DefaultWindow           = time.Second
	DefaultMinWindowSamples = 10
	DefaultSmoothing        = 0.2 // Gradient2's
	DefaultVegasSmoothing   = 1.0
	DefaultRTTTolerance     = 1.5
	DefaultLongWindow       = 600
	DefaultQueueSize        = 4
	DefaultBackoffRatio     = 0.9
	DefaultProbeMultiplier  = 30
	DefaultLossThreshold    = 0.01
	DefaultDelayTolerance   = 1.08
	DefaultIncreaseRatio    = 0.2
	DefaultRelearnAfter     = 5
)

// The largest values New accepts. A limit beyond LimitCeiling is no limit at all, and the
// ceilings keep every value the algorithms compute exact in a float64 and far from overflow.
const (
	LimitCeiling            = 1 << 24   // InitialLimit, MinLimit and MaxLimit: 16,777,216 calls
	QueueSizeCeiling        = 1 << 24   // QueueSize, and Vegas's Alpha and Beta: no more than the largest limit
	MinWindowSamplesCeiling = 1_000_000 // MinWindowSamples
	WindowsCeiling          = 1_000_000 // LongWindow, ProbeInterval and RelearnAfter: 11 days of 1 s windows
	ProbeMultiplierCeiling  = 1_000_000 // ProbeMultiplier
)

const (
	minWindow = time.Millisecond
	maxWindow = time.Hour
)

// resolved returns c with every unset field set to its default, or the error of the first
// invalid field, in the order of the fields.
func (c Config) resolved() (Config, error) {
	c = c.withDefaults()
	c.Classes = slices.Clone(c.Classes) // the caller's slice may change after New
	return c, c.validate()
}

// withDefaults returns c with every unset field set to its default. An unset InitialLimit
// is clamped into the bounds.
func (c Config) withDefaults() Config {
	setDefault(&c.Name, DefaultName)
	setDefault(&c.Algorithm, Gradient2)
	setDefault(&c.MinLimit, DefaultMinLimit)
	setDefault(&c.MaxLimit, DefaultMaxLimit)
	setDefault(&c.InitialLimit, min(max(DefaultInitialLimit, c.MinLimit), c.MaxLimit))
	setDefault(&c.Window, DefaultWindow)
	setDefault(&c.MinWindowSamples, DefaultMinWindowSamples)
	if c.Algorithm == Vegas {
		setDefault(&c.Smoothing, DefaultVegasSmoothing)
	} else {
		setDefault(&c.Smoothing, DefaultSmoothing)
	}
	setDefault(&c.RTTTolerance, DefaultRTTTolerance)
	setDefault(&c.LongWindow, DefaultLongWindow)
	setDefault(&c.QueueSize, DefaultQueueSize)
	setDefault(&c.BackoffRatio, DefaultBackoffRatio)
	setDefault(&c.ProbeMultiplier, DefaultProbeMultiplier)
	setDefault(&c.LossThreshold, DefaultLossThreshold)
	setDefault(&c.DelayTolerance, DefaultDelayTolerance)
	setDefault(&c.IncreaseRatio, DefaultIncreaseRatio)
	setDefault(&c.RelearnAfter, DefaultRelearnAfter)
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

// validate returns the error of the first invalid field of c, in the order of the fields. It
// takes every field as it is: a zero is invalid, not unset, where 0 is out of range.
func (c Config) validate() error {
	v := validator{instance: c.Name}
	if c.Algorithm != Gradient2 && c.Algorithm != AIMD && c.Algorithm != Vegas && c.Algorithm != LossDelay {
		v.fail("algorithm", c.Algorithm, "must be gradient2, aimd, vegas or lossdelay", CodeInvalidTuning, ErrInvalidTuning)
	}
	v.bound("minLimit", c.MinLimit, "a limit bound")
	v.bound("maxLimit", c.MaxLimit, "a limit bound")
	v.bound("initialLimit", c.InitialLimit, "the initial limit")
	if v.err == nil {
		if c.MinLimit > c.MaxLimit {
			v.fail("minLimit", c.MinLimit, fmt.Sprintf("must not exceed maxLimit (%d)", c.MaxLimit), CodeOutOfRange, ErrOutOfRange)
		} else if c.InitialLimit >= 1 && (c.InitialLimit < c.MinLimit || c.InitialLimit > c.MaxLimit) {
			v.fail("initialLimit", c.InitialLimit, fmt.Sprintf("must lie in [minLimit, maxLimit] = [%d, %d]", c.MinLimit, c.MaxLimit), CodeOutOfRange, ErrOutOfRange)
		}
	}
	if c.Window < minWindow || c.Window > maxWindow {
		v.fail("window", c.Window, "must lie in [1ms, 1h]", CodeOutOfRange, ErrOutOfRange)
	}
	v.count("minWindowSamples", c.MinWindowSamples, MinWindowSamplesCeiling)
	v.count("longWindow", c.LongWindow, WindowsCeiling)
	v.count("queueSize", c.QueueSize, QueueSizeCeiling)
	v.tuning("smoothing", c.Smoothing, c.Smoothing > 0 && c.Smoothing <= 1, "must lie in (0, 1]")
	v.tuning("rttTolerance", c.RTTTolerance, c.RTTTolerance >= 1, "must be at least 1")
	v.tuning("backoffRatio", c.BackoffRatio, c.BackoffRatio >= 0.5 && c.BackoffRatio < 1, "must lie in [0.5, 1)")
	v.tuning("lossThreshold", c.LossThreshold, c.LossThreshold > 0 && c.LossThreshold < 1, "must lie in (0, 1)")
	v.tuning("delayTolerance", c.DelayTolerance, c.DelayTolerance >= 1, "must be at least 1")
	v.tuning("increaseRatio", c.IncreaseRatio, c.IncreaseRatio > 0 && c.IncreaseRatio <= 1, "must lie in (0, 1]")
	if c.ProbeInterval < 0 || c.ProbeInterval > WindowsCeiling {
		v.fail("probeInterval", c.ProbeInterval, fmt.Sprintf("must lie in [0, %d]", WindowsCeiling), CodeInvalidTuning, ErrInvalidTuning)
	}
	v.count("relearnAfter", c.RelearnAfter, WindowsCeiling)
	if c.LatencyCeiling < 0 {
		v.fail("latencyCeiling", c.LatencyCeiling, "must not be negative", CodeInvalidTuning, ErrInvalidTuning)
	}
	v.vegasQueue(c.Alpha, c.Beta)
	v.count("probeMultiplier", c.ProbeMultiplier, ProbeMultiplierCeiling)
	if c.MaxWait < 0 {
		v.fail("maxWait", c.MaxWait, "must not be negative", CodeOutOfRange, ErrOutOfRange)
	}
	if c.MaxWaiters < 0 {
		v.fail("maxWaiters", c.MaxWaiters, "must not be negative", CodeInvalidTuning, ErrInvalidTuning)
	}
	if c.WaitOrder != FIFO && c.WaitOrder != LIFO {
		v.fail("waitOrder", c.WaitOrder, "must be fifo or lifo", CodeInvalidTuning, ErrInvalidTuning)
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

func (v *validator) fail(key string, value any, rule, code string, sentinel error) {
	if v.err == nil {
		v.err = &ConfigError{Instance: v.instance, Key: key, Value: value, Rule: rule, code: code, sentinel: sentinel}
	}
}

// bound checks a limit: what names it in the rule, as "a limit bound".
func (v *validator) bound(key string, value int, what string) {
	if value < 1 {
		v.fail(key, value, what+" must be at least 1", CodeBoundBelowOne, ErrBoundBelowOne)
	} else if value > LimitCeiling {
		v.fail(key, value, fmt.Sprintf("%s must not exceed %d", what, LimitCeiling), CodeOutOfRange, ErrOutOfRange)
	}
}

// count checks an integer tuning value, which lies in [1, ceiling].
func (v *validator) count(key string, value, ceiling int) {
	if value < 1 || value > ceiling {
		v.fail(key, value, fmt.Sprintf("must lie in [1, %d]", ceiling), CodeInvalidTuning, ErrInvalidTuning)
	}
}

// vegasQueue checks Vegas's alpha and beta: both unset, or alpha at least 1 and beta above,
// at most QueueSizeCeiling.
func (v *validator) vegasQueue(alpha, beta int) {
	switch {
	case alpha == 0 && beta == 0:
	case alpha < 1:
		v.fail("alpha", alpha, "must be at least 1, set with beta, or both 0 for the defaults", CodeInvalidTuning, ErrInvalidTuning)
	case beta <= alpha:
		v.fail("beta", beta, fmt.Sprintf("must exceed alpha (%d), or both be 0 for the defaults", alpha), CodeInvalidTuning, ErrInvalidTuning)
	case beta > QueueSizeCeiling:
		v.fail("beta", beta, fmt.Sprintf("must not exceed %d", QueueSizeCeiling), CodeInvalidTuning, ErrInvalidTuning)
	}
}

// tuning checks a float: the comparisons in ok are false for NaN, and infinities are
// rejected here since every rule has a finite bound on at least one side.
func (v *validator) tuning(key string, value float64, ok bool, rule string) {
	if !ok || math.IsInf(value, 0) {
		v.fail(key, value, rule+" and be finite", CodeInvalidTuning, ErrInvalidTuning)
	}
}
