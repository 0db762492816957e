package adaptivelimit

import (
	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// keySpec is one external key: its name after "adaptiveLimit.", the Config field it sets, and
// its row of the configuration reference. The field's type says how set parses the text; where
// values is set, the text is one of their names, in any case.
type keySpec struct {
	name   string
	field  func(*Config) any // a pointer to the field
	values []any             // the values a name may select
	negate bool              // a bool key that sets the field to its opposite: enabled sets Disabled
	valid  string            // the valid values, for the reference
	errs   []error           // the sentinels of an invalid value, for the reference
}

// keys is every key, in the order of the configuration reference. A Config field that external
// configuration sets needs an entry here and a row in docs/configuration.md; validate checks it.
var keys = []keySpec{
	{name: "algorithm", field: func(c *Config) any { return &c.Algorithm }, values: []any{Gradient2, AIMD, Vegas, LossDelay},
		valid: "gradient2, aimd, vegas, lossdelay (any case)", errs: []error{ErrInvalidTuning}},
	{name: "initialLimit", field: func(c *Config) any { return &c.InitialLimit },
		valid: "[minLimit, maxLimit]; clamped into them when unset", errs: []error{ErrBoundBelowOne, ErrOutOfRange}},
	{name: "minLimit", field: func(c *Config) any { return &c.MinLimit },
		valid: "at least 1, at most maxLimit", errs: []error{ErrBoundBelowOne, ErrOutOfRange}},
	{name: "maxLimit", field: func(c *Config) any { return &c.MaxLimit },
		valid: "1 to 16,777,216", errs: []error{ErrBoundBelowOne, ErrOutOfRange}},
	{name: "window", field: func(c *Config) any { return &c.Window },
		valid: "1ms to 1h", errs: []error{ErrDurationSyntax, ErrOutOfRange}},
	{name: "minWindowSamples", field: func(c *Config) any { return &c.MinWindowSamples },
		valid: "1 to 1,000,000 (calls)", errs: []error{ErrInvalidTuning}},
	{name: "subUnitFloor", field: func(c *Config) any { return &c.SubUnitFloor },
		valid: "[1/65536, 1]: the lowest limit, below 1 for paced calls; 1 for off; 1/1024 by default for LossDelay with minLimit 1, no classes and maxWait 0, where a value below 1 needs all three; used by LossDelay", errs: []error{ErrInvalidTuning}},
	{name: "smoothing", field: func(c *Config) any { return &c.Smoothing },
		valid: "(0, 1]; 1 by default for Vegas; used by Gradient2 and Vegas", errs: []error{ErrInvalidTuning}},
	{name: "rttTolerance", field: func(c *Config) any { return &c.RTTTolerance },
		valid: "at least 1; used by Gradient2", errs: []error{ErrInvalidTuning}},
	{name: "longWindow", field: func(c *Config) any { return &c.LongWindow },
		valid: "1 to 1,000,000 (windows); used by Gradient2", errs: []error{ErrInvalidTuning}},
	{name: "queueSize", field: func(c *Config) any { return &c.QueueSize },
		valid: "1 to 16,777,216; used by Gradient2", errs: []error{ErrInvalidTuning}},
	{name: "backoffRatio", field: func(c *Config) any { return &c.BackoffRatio },
		valid: "[0.5, 1); used by AIMD and LossDelay", errs: []error{ErrInvalidTuning}},
	{name: "lossThreshold", field: func(c *Config) any { return &c.LossThreshold },
		valid: "(0, 1); used by LossDelay", errs: []error{ErrInvalidTuning}},
	{name: "delayTolerance", field: func(c *Config) any { return &c.DelayTolerance },
		valid: "at least 1; used by LossDelay", errs: []error{ErrInvalidTuning}},
	{name: "increaseRatio", field: func(c *Config) any { return &c.IncreaseRatio },
		valid: "(0, 1]; used by LossDelay", errs: []error{ErrInvalidTuning}},
	{name: "probeInterval", field: func(c *Config) any { return &c.ProbeInterval },
		valid: "0 to 1,000,000 (windows); 0 probes only at the start; used by LossDelay", errs: []error{ErrInvalidTuning}},
	{name: "relearnAfter", field: func(c *Config) any { return &c.RelearnAfter },
		valid: "1 to 1,000,000 (windows); used by LossDelay", errs: []error{ErrInvalidTuning}},
	{name: "latencyCeiling", field: func(c *Config) any { return &c.LatencyCeiling },
		valid: "at least 0s; 0 for none; used by LossDelay", errs: []error{ErrDurationSyntax, ErrInvalidTuning}},
	{name: "alpha", field: func(c *Config) any { return &c.Alpha },
		valid: "at least 1 and below beta, or 0 with beta 0 for 3*log10root(limit); used by Vegas", errs: []error{ErrInvalidTuning}},
	{name: "beta", field: func(c *Config) any { return &c.Beta },
		valid: "above alpha, at most 16,777,216, or 0 with alpha 0 for 6*log10root(limit); used by Vegas", errs: []error{ErrInvalidTuning}},
	{name: "probeMultiplier", field: func(c *Config) any { return &c.ProbeMultiplier },
		valid: "1 to 1,000,000; used by Vegas", errs: []error{ErrInvalidTuning}},
	{name: "maxWait", field: func(c *Config) any { return &c.MaxWait },
		valid: "at least 0s; 0 fails fast", errs: []error{ErrDurationSyntax, ErrOutOfRange}},
	{name: "maxWaiters", field: func(c *Config) any { return &c.MaxWaiters },
		valid: "at least 0; 0 for the limit at the moment", errs: []error{ErrInvalidTuning}},
	{name: "waitOrder", field: func(c *Config) any { return &c.WaitOrder }, values: []any{FIFO, LIFO},
		valid: "fifo, lifo (any case)", errs: []error{ErrInvalidTuning}},
	{name: "classes", field: func(c *Config) any { return &c.Classes },
		valid: "`name:reserve` pairs, highest priority first, separated by commas (`critical:0.3,standard:0.4,sheddable:0`): at most 8, names distinct and not empty, reserves in [0, 1] adding up to at most 1; none for none", errs: []error{ErrInvalidTuning}},
	{name: "enabled", field: func(c *Config) any { return &c.Disabled }, negate: true,
		valid: "true, false (any case)", errs: []error{ErrInvalidTuning}},
	{name: "dryRun", field: func(c *Config) any { return &c.DryRun },
		valid: "true, false (any case); `enabled=false` wins over it", errs: []error{ErrInvalidTuning}},
}

// callbacks are the Config fields that only code sets. A registry merges them as it merges
// keys, a zero field being unset, and compares them by the function they run.
var callbacks = []keySpec{
	{name: "dropOn", field: func(c *Config) any { return &c.DropOn }},
	{name: "onLimitChange", field: func(c *Config) any { return &c.OnLimitChange }},
	{name: "clock", field: func(c *Config) any { return &c.Clock }},
	{name: "random", field: func(c *Config) any { return &c.Random }},
}

// keyNamed returns the key called name, or nil.
func keyNamed(name string) *keySpec {
	for i := range keys {
		if keys[i].name == name {
			return &keys[i]
		}
	}
	return nil
}

func (k *keySpec) value(c *Config) reflect.Value { return reflect.ValueOf(k.field(c)).Elem() }

// set parses text into k's field of c, or returns the rule that text breaks and its sentinel.
func (k *keySpec) set(c *Config, text string) (rule string, sentinel error) {
	switch p := k.field(c).(type) {
	case *int:
		n, err := strconv.Atoi(text)
		if err != nil {
			return "must be an integer", ErrInvalidTuning
		}
		*p = n
	case *float64:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return "must be a number", ErrInvalidTuning
		}
		*p = f
	case *time.Duration:
		d, err := time.ParseDuration(text)
		if err != nil {
			return "must be a Go duration such as 500ms or 2s", ErrDurationSyntax
		}
		*p = d
	case *bool:
		b := strings.EqualFold(text, "true")
		if !b && !strings.EqualFold(text, "false") {
			return "must be true or false", ErrInvalidTuning
		}
		*p = b != k.negate
	case *[]Class:
		classes, ok := parseClasses(text)
		if !ok {
			return "must be name:reserve pairs separated by commas, such as critical:0.3,standard:0.4,sheddable:0", ErrInvalidTuning
		}
		*p = classes
	default:
		for _, v := range k.values {
			if strings.EqualFold(text, fmt.Sprint(v)) {
				k.value(c).Set(reflect.ValueOf(v))
				return "", nil
			}
		}
		return "must be one of " + k.names(), ErrInvalidTuning
	}
	return "", nil
}

// format returns k's field of c as external configuration writes it.
func (k *keySpec) format(c *Config) string {
	switch p := k.field(c).(type) {
	case *float64:
		return strconv.FormatFloat(*p, 'g', -1, 64)
	case *bool:
		return strconv.FormatBool(*p != k.negate)
	case *[]Class:
		return formatClasses(*p)
	}
	v := k.value(c)
	switch v.Kind() {
	case reflect.Func:
		if v.IsNil() {
			return "none"
		}
		return runtime.FuncForPC(v.Pointer()).Name()
	case reflect.Interface:
		if v.IsNil() {
			return "none"
		}
		if x := v.Interface(); v.Elem().Kind() == reflect.Pointer {
			return fmt.Sprintf("%T(%p)", x, x)
		}
		return fmt.Sprintf("%T", v.Interface())
	}
	return fmt.Sprint(v.Interface())
}

// same reports whether k's fields of a and b hold the same value. Functions are the same when
// they run the same code: two closures of one function literal, whatever they captured.
func (k *keySpec) same(a, b *Config) bool {
	va, vb := k.value(a), k.value(b)
	if va.Kind() == reflect.Interface {
		if va.IsNil() || vb.IsNil() {
			return va.IsNil() == vb.IsNil()
		}
		va, vb = va.Elem(), vb.Elem()
		if va.Type() != vb.Type() {
			return false
		}
	}
	switch va.Kind() {
	case reflect.Func, reflect.Pointer:
		return va.Pointer() == vb.Pointer()
	case reflect.Slice:
		return reflect.DeepEqual(va.Interface(), vb.Interface())
	}
	return va.Comparable() && va.Equal(vb)
}

func (k *keySpec) names() string {
	names := make([]string, len(k.values))
	for i, v := range k.values {
		names[i] = fmt.Sprint(v)
	}
	return strings.Join(names, ", ")
}
