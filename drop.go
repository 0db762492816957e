package adaptivelimit

import (
	"context"
	"errors"
	"net"
	"os"
)

// DefaultDropOn is the default Config.DropOn: true for errors, wrapped or joined, that mean the
// dependency is overloaded: context.DeadlineExceeded (a per-call timeout inside the limit),
// os.ErrDeadlineExceeded, a net.Error whose Timeout is true, and ErrLimitExceeded from a limiter
// or bulkhead inside this one. context.Canceled is not: the caller gave up.
func DefaultDropOn(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	return errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.Is(err, ErrLimitExceeded) ||
		isTimeout(err)
}

// isTimeout walks err's tree for a net.Error that timed out. A type assertion per node
// keeps it allocation-free, unlike errors.As with a fresh target.
func isTimeout(err error) bool {
	switch e := err.(type) {
	case nil:
		return false
	case net.Error:
		if e.Timeout() {
			return true
		}
	}
	switch e := err.(type) {
	case interface{ Unwrap() error }:
		return isTimeout(e.Unwrap())
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			if isTimeout(inner) {
				return true
			}
		}
	}
	return false
}
