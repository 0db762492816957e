package adaptivelimit

import "time"

// aimd is additive increase, multiplicative decrease, applied once a window; latency plays no
// part (docs/algorithms.md, "AIMD").
type aimd struct {
	limit    int
	minLimit int
	maxLimit int
	backoff  float64
}

func newAIMD(c Config) *aimd {
	return &aimd{limit: c.InitialLimit, minLimit: c.MinLimit, maxLimit: c.MaxLimit, backoff: c.BackoffRatio}
}

func (a *aimd) next(w window, d Decision) Decision {
	switch {
	case w.drops > 0:
		a.limit = saturate(float64(a.limit)*a.backoff, a.minLimit, a.maxLimit)
	case w.maxInFlight >= a.limit-a.limit/2 && a.limit < a.maxLimit: // at least half in use
		a.limit++
	}
	a.limit = clamp(a.limit, a.minLimit, a.maxLimit)
	d.LimitAfter = a.limit
	return d
}

func (a *aimd) longLatency() time.Duration { return 0 }
