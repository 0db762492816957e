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
	CodeBoundBelowOne = "R4C-ATR-003" // a limit bound below 1
	CodeOutOfRange    = "R4C-ATR-009" // bounds out of order, or a window out of range
	CodeInvalidTuning = "R4C-REG-001" // an algorithm's tuning out of its range
)

// Sentinels that configuration errors match with errors.Is, one per code.
var (
	ErrBoundBelowOne = errors.New(CodeBoundBelowOne + ": limit bound below 1")
	ErrOutOfRange    = errors.New(CodeOutOfRange + ": value out of range")
	ErrInvalidTuning = errors.New(CodeInvalidTuning + ": invalid tuning")
)

// ConfigError reports one invalid Config field: the key it is set by, its value and the rule
// it breaks.
type ConfigError struct {
	Instance string // the limiter's name
	Key      string // the configuration key, as in external configuration: "maxLimit"
	Value    any
	Rule     string // what a valid value is
	code     string
	sentinel error
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("%s: adaptive limit %q: %s = %v: %s", e.code, e.Instance, e.Key, e.Value, e.Rule)
}

// Code returns the error's code, such as "R4C-ATR-003".
func (e *ConfigError) Code() string { return e.code }

// Unwrap returns the sentinel for the error's code.
func (e *ConfigError) Unwrap() error { return e.sentinel }
