package adaptivelimit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFinish(t *testing.T) {
	for _, tc := range []struct {
		o              Outcome
		windows, drops uint64
	}{
		{Sample, 1, 0},
		{Drop, 1, 1},
		{Ignore, 0, 0},
	} {
		t.Run(tc.o.String(), func(t *testing.T) {
			l, clock := newManual(t, Config{MinWindowSamples: 1})
			p, err := l.Acquire()
			require.NoError(t, err)
			clock.Advance(time.Second)
			p.Finish(tc.o)
			s := l.Snapshot()
			require.Zero(t, s.InFlight)
			require.Equal(t, tc.windows, s.Windows)
			require.Equal(t, int(tc.drops), s.Last.Drops)
		})
	}
	require.Equal(t, "Outcome(7)", Outcome(7).String())
}
