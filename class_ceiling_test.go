package adaptivelimit

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// A call turned away takes one slot back from each class below it, up to the limit, also
// while windows close beside it and lower what is held back: a class's word of shut, which
// spares its calls turned away the reads of the classes below once those are all shut, never
// says so of a class that a close lowered since (run with -race -cpu=1,2,4,8). After each
// round of calls turned away beside closes: where a class's word says shut at the limit,
// every class below it holds back the whole limit, and one more call of each class turned
// away takes one slot back from each class below it that holds back less.
func TestClassShutAcrossCloses(t *testing.T) {
	classes := []Class{{"a", 0}, {"b", 0}, {"c", 0}, {"d", 0}}
	const limit = 4
	l := newClassed(t, limit, classes)
	defer finishAll(acquireClassN(t, l, "a", limit))
	cs := l.classes
	for round := range 2000 {
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Add(2)
		go func() { // calls of the classes above the lowest, turned away
			defer wg.Done()
			<-start
			for i := range 60 {
				if _, err := l.AcquireClass(classes[i%3].Name); err == nil {
					t.Error("a call admitted over a full limit")
					return
				}
			}
		}()
		go func() { // windows closing: one that holds back one slot, then one that lends half
			defer wg.Done()
			<-start
			for i := range 8 {
				cs.windowClosed(uint64(1+i%2*1000), 1, l.wait.lists)
			}
		}()
		close(start)
		wg.Wait()
		for c := range len(classes) - 1 {
			if s := cs.ceilings.class[c].shutBelow.Load(); uint32(limit) <= uint32(s) {
				for d := c + 1; d < len(classes); d++ {
					require.GreaterOrEqual(t, cs.ceilings.class[d].takenBack.Load(), int64(limit),
						"round %d: class %d's word says shut below it, class %d holds back %v", round, c, d, classHolds(l))
				}
			}
		}
		for c := range len(classes) - 1 {
			before := classHolds(l)
			_, err := l.AcquireClass(classes[c].Name)
			require.ErrorIs(t, err, ErrLimitExceeded)
			after := classHolds(l)
			for d := c + 1; d < len(classes); d++ {
				require.Equal(t, min(before[d]+1, max(before[d], limit)), after[d],
					"round %d: class %d turned away, class %d held back %v, then %v", round, c, d, before, after)
			}
		}
	}
}

// The steps of a call turned away (ceilings.turnedAway), with a window's close between its taking back and its
// word of shut, an interleaving that the scheduler seldom makes: the close lowers what the
// classes below hold back, so the word must not say shut, and the next call turned away takes
// one slot back from each of them.
func TestClassShutNotAfterClose(t *testing.T) {
	const limit = 4
	l := newClassed(t, limit, []Class{{"critical", 0}, {"standard", 0}, {"sheddable", 0}})
	defer finishAll(acquireClassN(t, l, "critical", limit))
	cs := l.classes
	for range 2 * limit {
		_, err := l.AcquireClass("critical")
		require.ErrorIs(t, err, ErrLimitExceeded)
	}
	cs.windowClosed(1000, 1, l.wait.lists) // critical turned calls away: one slot held back below
	require.Equal(t, []int64{0, 1, 1}, classHolds(l))
	for range limit - 2 {
		_, err := l.AcquireClass("critical")
		require.ErrorIs(t, err, ErrLimitExceeded)
	}
	s := cs.ceilings.class[0].shutBelow.Load() // read first, as turnedAway reads it
	require.False(t, cs.ceilings.class[0].shutAt(limit), "one slot short of shut below critical")
	require.True(t, cs.ceilings.withhold(0, len(cs.names)), "the call that shuts them")
	cs.windowClosed(1000, 1, l.wait.lists) // between its taking back and its word
	lowered := classHolds(l)
	cs.ceilings.class[0].markShut(limit, s)
	require.False(t, cs.ceilings.class[0].shutAt(limit), "a close came between: what the classes below hold back is %v", lowered)
	_, err := l.AcquireClass("critical")
	require.ErrorIs(t, err, ErrLimitExceeded)
	require.Equal(t, []int64{0, lowered[1] + 1, lowered[2] + 1}, classHolds(l))
}

// A call turned away while a window's close lowers what the classes below hold back takes its
// slots back, whatever its class's word of shut said before the close, and whatever a call
// turned away in the close, before the lowering, found: the close's steps run here in its
// order (lowering), with calls turned away between them, an interleaving that the scheduler
// seldom makes.
func TestClassShutNotWhileAWindowCloses(t *testing.T) {
	const limit = 4
	l := newClassed(t, limit, []Class{{"critical", 0}, {"standard", 0}, {"sheddable", 0}})
	defer finishAll(acquireClassN(t, l, "critical", limit))
	cs := l.classes
	turnAway := func() {
		t.Helper()
		_, err := l.AcquireClass("critical")
		require.ErrorIs(t, err, ErrLimitExceeded)
	}
	for range limit + 1 {
		turnAway()
	}
	require.Equal(t, []int64{0, limit, limit}, classHolds(l))
	require.True(t, cs.ceilings.class[0].shutAt(limit), "the classes below critical shut, and its word says so")
	cs.ceilings.lowering(len(cs.names), func() {
		turnAway() // the classes below are still shut: its word must not say so until the close ends
		cs.ceilings.lend(1)
		cs.ceilings.lend(2)
		turnAway()
	})
	require.Equal(t, []int64{0, limit/2 + 1, limit/2 + 1}, classHolds(l), "a call turned away after the close halved what is held back")
	require.False(t, cs.ceilings.class[0].shutAt(limit))
	turnAway()
	require.Equal(t, []int64{0, limit/2 + 2, limit/2 + 2}, classHolds(l))
}
