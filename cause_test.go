package adaptivelimit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCauseOf(t *testing.T) {
	const lo, hi = 2, 50
	for _, tc := range []struct {
		name string
		alg  Algorithm
		d    Decision
		want Cause
	}{
		{"up", AIMD, Decision{LimitBefore: 10, LimitAfter: 11}, CauseGrowth},
		{"drops backed AIMD off", AIMD, Decision{Drops: 1, LimitBefore: 10, LimitAfter: 9}, CauseDrop},
		{"drops backed Vegas off", Vegas, Decision{Drops: 1, LimitBefore: 10, LimitAfter: 9}, CauseDrop},
		{"Gradient2's gradient, whatever the drops", Gradient2, Decision{Drops: 1, Gradient: 0.8, LimitBefore: 10, LimitAfter: 8}, CauseLatency},
		{"Vegas's queue", Vegas, Decision{LimitBefore: 10, LimitAfter: 9}, CauseLatency},
		{"app-limited", Gradient2, Decision{Cause: CauseAppLimited, LimitBefore: 10, LimitAfter: 10}, CauseAppLimited},
		{"app-limited at a bound", Vegas, Decision{Cause: CauseAppLimited, LimitBefore: hi, LimitAfter: hi}, CauseAppLimited},
		{"kept", Gradient2, Decision{Gradient: 1, LimitBefore: 10, LimitAfter: 10}, CauseSteady},
		{"kept at MaxLimit, nothing pushing down", AIMD, Decision{LimitBefore: hi, LimitAfter: hi}, CauseBounds},
		{"kept at MaxLimit with drops Gradient2 ignores", Gradient2, Decision{Drops: 1, Gradient: 1, LimitBefore: hi, LimitAfter: hi}, CauseBounds},
		{"kept at MaxLimit with drops", AIMD, Decision{Drops: 1, LimitBefore: hi, LimitAfter: hi}, CauseDrop},
		{"kept at MinLimit with drops", AIMD, Decision{Drops: 1, LimitBefore: lo, LimitAfter: lo}, CauseBounds},
		{"kept at MinLimit by the gradient", Gradient2, Decision{Gradient: 0.5, LimitBefore: lo, LimitAfter: lo}, CauseBounds},
		{"kept at MinLimit, nothing pushing down", AIMD, Decision{LimitBefore: lo, LimitAfter: lo}, CauseSteady},
		{"LossDelay's loss", LossDelay, Decision{Cause: CauseDrop, Drops: 1, LimitBefore: 10, LimitAfter: 7}, CauseDrop},
		{"LossDelay's ceiling", LossDelay, Decision{Cause: CauseCeiling, LimitBefore: 10, LimitAfter: 7}, CauseCeiling},
		{"LossDelay's ceiling at MinLimit", LossDelay, Decision{Cause: CauseCeiling, LimitBefore: lo, LimitAfter: lo}, CauseBounds},
		{"LossDelay's gradient", LossDelay, Decision{Cause: CauseLatency, Gradient: 0.9, LimitBefore: 10, LimitAfter: 9}, CauseLatency},
		{"LossDelay's growth", LossDelay, Decision{Cause: CauseGrowth, LimitBefore: 10, LimitAfter: 12}, CauseGrowth},
		{"LossDelay's growth at MaxLimit", LossDelay, Decision{Cause: CauseGrowth, LimitBefore: hi, LimitAfter: hi}, CauseBounds},
		{"LossDelay's hold", LossDelay, Decision{Cause: CauseAppLimited, LimitBefore: 10, LimitAfter: 10}, CauseAppLimited},
		{"LossDelay's probe", LossDelay, Decision{Cause: CauseProbe, LimitBefore: 10, LimitAfter: 5}, CauseProbe},
		{"LossDelay's probe at MinLimit", LossDelay, Decision{Cause: CauseProbe, LimitBefore: lo, LimitAfter: lo}, CauseProbe},
		{"LossDelay's relearn", LossDelay, Decision{Cause: CauseRelearn, LimitBefore: 10, LimitAfter: 14}, CauseRelearn},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, causeOf(tc.alg, &tc.d, lo, hi))
		})
	}
}

func TestCauseNames(t *testing.T) {
	var names []string
	for c := range Causes() {
		names = append(names, c.String())
	}
	require.Equal(t, []string{"steady", "drop", "ceiling", "latency", "growth", "app-limited", "probe", "relearn", "bounds"}, names)
	require.Equal(t, "Cause(9)", Cause(causes).String())
	for c := range Causes() {
		if c == CauseDrop {
			break // an iterator that stops early
		}
		require.Equal(t, CauseSteady, c)
	}
}

// Each window's decision carries its cause, to OnLimitChange too, and is counted by cause and
// direction.
func TestDecisionsByCause(t *testing.T) {
	var changes []Decision
	l, clock := newManual(t, Config{
		Algorithm: AIMD, InitialLimit: 4, MinLimit: 2, MaxLimit: 5, MinWindowSamples: 1,
		OnLimitChange: func(_ string, d Decision) { changes = append(changes, d) },
	})
	window := func(inFlight int, err error) Decision {
		held := acquireN(t, l, inFlight)
		for i := range held[1:] {
			held[1+i].Done(err)
		}
		clock.Advance(time.Second)
		held[0].Done(err) // closes the window
		return l.Snapshot().Last
	}
	require.Equal(t, CauseGrowth, window(4, nil).Cause, "4 in use of 4: up to 5")
	require.Equal(t, CauseBounds, window(5, nil).Cause, "at MaxLimit")
	require.Equal(t, CauseDrop, window(1, errDeadline).Cause, "backed off to 4")
	window(1, errDeadline) // 3
	window(1, errDeadline) // 2
	require.Equal(t, CauseBounds, window(1, errDeadline).Cause, "at MinLimit")
	require.Equal(t, CauseGrowth, window(1, nil).Cause, "1 of 2 in use: half")
	require.Equal(t, CauseSteady, window(1, nil).Cause, "1 of 3 in use")

	s := l.Snapshot()
	type counts struct{ kept, up, down uint64 }
	want := map[Cause]counts{CauseGrowth: {0, 2, 0}, CauseBounds: {2, 0, 0}, CauseDrop: {0, 0, 3}, CauseSteady: {1, 0, 0}}
	for c := range Causes() {
		kept, up, down := s.Decisions(c)
		require.Equal(t, want[c], counts{kept, up, down}, "%v", c)
	}
	kept, up, down := s.Decisions(Cause(causes))
	require.Zero(t, kept+up+down, "a cause past the known ones")
	require.EqualValues(t, 8, s.Windows)
	require.Len(t, changes, 5)
	for _, d := range changes {
		require.NotEqual(t, CauseSteady, d.Cause, "the listener hears the cause")
	}
}
