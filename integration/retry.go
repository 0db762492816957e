package integration

import (
	"math"
	"strconv"
	"time"
)

// RetryHint returns d in whole units, rounded up, as a retry hint's decimal value (HTTP's
// Retry-After in seconds, gRPC's grpc-retry-pushback-ms in milliseconds), or "" for a d of
// zero or less, which sends none. The value is at most math.MaxInt32, the most that gRPC
// reads and what HTTP caches assume of any delta-seconds, so it never overflows and is never
// negative.
func RetryHint(d, unit time.Duration) string {
	if d <= 0 {
		return ""
	}
	n := d / unit
	if d%unit != 0 {
		n++
	}
	return strconv.FormatInt(int64(min(n, math.MaxInt32)), 10)
}
