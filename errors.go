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

// Sentinels that configuration errors match with errors.Is, one per code of the Java
// library this one follows; each one's text starts with its code.
var (
	ErrDurationSyntax  error = &configCode{"R4C-ATR-001", "duration syntax"}                      // a duration that does not parse
	ErrBoundBelowOne   error = &configCode{"R4C-ATR-003", "limit bound below 1"}                  // a limit bound below 1
	ErrOutOfRange      error = &configCode{"R4C-ATR-009", "value out of range"}                   // bounds out of order or too large, or a window out of range
	ErrInvalidTuning   error = &configCode{"R4C-REG-001", "invalid tuning"}                       // an algorithm's tuning out of its range, an unknown key or value
	ErrUnknownConfig   error = &configCode{"R4C-REG-004", "unknown configuration"}                // a named configuration that does not exist
	ErrConfigConflict  error = &configCode{"R4C-REG-008", "shared name, different configuration"} // a shared name whose call sites resolve to different configurations
	ErrUnknownInstance error = &configCode{"R4C-REG-009", "unknown instance id"}                  // an instance id that no call site has created
)

// configCode is a sentinel: a code and what it means.
type configCode struct{ code, text string }

func (c *configCode) Error() string { return c.code + ": " + c.text }

// ConfigError reports one invalid Config field: its key, its value and the rule it breaks.
type ConfigError struct {
	Instance string // the limiter's name, where the error concerns one
	Key      string // the configuration key, as the source spells it: "maxLimit", "instances.orders.adaptiveLimit.maxLimit"
	Value    any    // the value; from a properties text, as written there
	Rule     string // what a valid value is
	Line     int    // the key's line in the text ParseProperties read; 0 if it came from elsewhere
	sentinel error  // one of the ErrXxx, which holds the code
}

func (e *ConfigError) Error() string {
	s := e.Code() + ": "
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

// Code returns the error's code, such as "R4C-ATR-003", or "" for a ConfigError made
// elsewhere than this package.
func (e *ConfigError) Code() string {
	if c, ok := e.sentinel.(*configCode); ok {
		return c.code
	}
	return ""
}

// Unwrap returns the sentinel for the error's code.
func (e *ConfigError) Unwrap() error { return e.sentinel }
