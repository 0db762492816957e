package adaptivelimit

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Finish(Drop) is a drop whatever DropOn says: the caller classified the call itself.
func TestFinishDropIgnoresDropOn(t *testing.T) {
	forEachAlgorithm(t, func(t *testing.T, alg Algorithm) {
		l, _ := newManual(t, Config{Algorithm: alg, MinWindowSamples: 3, DropOn: func(error) bool { return false }})
		for _, o := range []Outcome{Sample, Drop, Ignore, Departed, Drop} {
			p, err := l.Acquire()
			require.NoError(t, err)
			p.Finish(o)
			require.Zero(t, l.InFlight(), "%v frees the slot", o)
			p.Finish(o) // cleared: a second finish does nothing
		}
		read := l.stripes.sum(0)
		require.EqualValues(t, 3, read.samples, "Sample and two Drops; Ignore and a Departed after no window are no sample")
		require.EqualValues(t, 2, read.drops)
	})
}
