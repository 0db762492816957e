package integration_test

import (
	"math"
	"testing"
	"time"

	"github.com/resilience4cata/adaptivelimit/integration"
)

// Rounds up, clamps at MaxInt32 (2147483647), never wraps below zero.
func TestRetryHint(t *testing.T) {
	for _, c := range []struct {
		d, unit time.Duration
		want    string
	}{
		{0, time.Second, ""},
		{-time.Second, time.Second, ""},
		{time.Nanosecond, time.Second, "1"},
		{time.Second, time.Second, "1"},
		{1500 * time.Millisecond, time.Second, "2"},
		{math.MaxInt64, time.Second, "2147483647"},
		{math.MaxInt64, time.Millisecond, "2147483647"},
		{math.MaxInt64 - 1, time.Nanosecond, "2147483647"},
		{1500 * time.Microsecond, time.Millisecond, "2"},
	} {
		if got := integration.RetryHint(c.d, c.unit); got != c.want {
			t.Errorf("RetryHint(%v, %v) = %q, want %q", c.d, c.unit, got, c.want)
		}
	}
}

func TestSendable(t *testing.T) {
	for s, want := range map[string]bool{
		"critical": true, "very high": true, "a~!": true,
		"": false, " a": false, "a ": false, "café": false, "caf\xe9": false,
		"a\r\nb": false, "a\x00": false, "a\x7f": false, "a\tb": false,
	} {
		if got := integration.Sendable(s); got != want {
			t.Errorf("Sendable(%q) = %v, want %v", s, got, want)
		}
	}
}
