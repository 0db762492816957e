package adaptivelimit

import (
	"errors"
	"fmt"
)

// ErrLimitExceeded is matched, through errors.Is, by every rejection of every limiter.
var ErrLimitExceeded = errors.New("adaptivelimit: limit exceeded")

// LimitExceededError is the error a full limiter returns. Each limiter returns its own single
// preallocated value, so that rejecting a call allocates nothing.
type LimitExceededError struct {
	instanceID string
	msg        string
}

func newLimitExceededError(name string) *LimitExceededError {
	return &LimitExceededError{
		instanceID: name,
		msg:        fmt.Sprintf("adaptivelimit: limit of %q exceeded: call rejected without running", name),
	}
}

func (e *LimitExceededError) Error() string { return e.msg }

// InstanceID returns the name of the limiter that rejected the call.
func (e *LimitExceededError) InstanceID() string { return e.instanceID }

// Is reports whether target is ErrLimitExceeded.
func (e *LimitExceededError) Is(target error) bool { return target == ErrLimitExceeded }

// The codes of configuration errors, shared with the Java library this one follows.
const (
	CodeDurationSyntax  = "R4C-ATR-001" // a duration that does not parse
	CodeBoundBelowOne   = "R4C-ATR-003" // a limit bound below 1
	CodeOutOfRange      = "R4C-ATR-009" // bounds out of order or above LimitCeiling, or a window out of range
	CodeInvalidTuning   = "R4C-REG-001" // an algorithm's tuning out of its range, an unknown key or value
	CodeUnknownConfig   = "R4C-REG-004" // a named configuration that does not exist
	CodeConfigConflict  = "R4C-REG-008" // a shared name whose call sites resolve to different configurations
	CodeUnknownInstance = "R4C-REG-009" // an instance id that no call site has created
)

// Sentinels that configuration errors match with errors.Is, one per code.
var (
	ErrDurationSyntax  = errors.New(CodeDurationSyntax + ": duration syntax")
	ErrBoundBelowOne   = errors.New(CodeBoundBelowOne + ": limit bound below 1")
	ErrOutOfRange      = errors.New(CodeOutOfRange + ": value out of range")
	ErrInvalidTuning   = errors.New(CodeInvalidTuning + ": invalid tuning")
	ErrUnknownConfig   = errors.New(CodeUnknownConfig + ": unknown configuration")
	ErrConfigConflict  = errors.New(CodeConfigConflict + ": shared name, different configuration")
	ErrUnknownInstance = errors.New(CodeUnknownInstance + ": unknown instance id")
)

// ConfigError reports one invalid Config field: the key it is set by, its value and the rule
// it breaks.
type ConfigError struct {
	Instance string // the limiter's name, where the error concerns one
	Key      string // the configuration key, as the source spells it: "maxLimit", "instances.orders.adaptiveLimit.maxLimit"
	Value    any    // the value; from a properties text, as written there
	Rule     string // what a valid value is
	Line     int    // the key's line in the text ParseProperties read; 0 if it came from elsewhere
	code     string
	sentinel error
}

func (e *ConfigError) Error() string {
	s := e.code + ": "
	if e.Line > 0 {
		s += fmt.Sprintf("line %d: ", e.Line)
	}
	if e.Instance != "" {
		s += fmt.Sprintf("adaptive limit %q: ", e.Instance)
	}
	if e.Key == "" {
		return s + fmt.Sprintf("%q: %s", e.Value, e.Rule)
	}
	return s + fmt.Sprintf("%s = %v: %s", e.Key, e.Value, e.Rule)
}

// Code returns the error's code, such as "R4C-ATR-003".
func (e *ConfigError) Code() string { return e.code }

// Unwrap returns the sentinel for the error's code.
func (e *ConfigError) Unwrap() error { return e.sentinel }
