package adaptivelimit

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestClassReserves(t *testing.T) {
	for _, tc := range []struct {
		limit   int
		classes []Class
		want    []int // reserved, by class
		kept    []int // held back from each class: the never-lent parts above it
	}{
		{10, threeClasses, []int{3, 4, 0}, []int{0, 2, 4}},
		{7, threeClasses, []int{2, 2, 0}, []int{0, 1, 2}},                                 // floor(2.1), floor(2.8)
		{1, threeClasses, []int{0, 0, 0}, []int{0, 0, 0}},                                 // a 0 reserve gets no slot
		{10, []Class{{"a", 0.3}, {"b", 0.4}, {"c", 0.3}}, []int{3, 4, 3}, []int{0, 2, 4}}, // adding up to 1
		{3, []Class{{"a", 0.5}, {"b", 0.5}}, []int{1, 1}, []int{0, 1}},
		{5, []Class{{"all", 1}}, []int{5}, []int{0}},
	} {
		l := newClassed(t, tc.limit, tc.classes)
		snap := l.Snapshot()
		require.Len(t, snap.Classes, len(tc.classes))
		for i, c := range snap.Classes {
			require.Equal(t, tc.classes[i].Name, c.Name)
			require.Equal(t, tc.want[i], c.Reserved, "%v at %d: %s", tc.classes, tc.limit, c.Name)
			require.Equal(t, int64(tc.kept[i]), l.classes.ceilings.hold(i), "%v at %d: %s", tc.classes, tc.limit, c.Name)
		}
	}
}

// What each class may take: every slot but the never-lent parts of the reserves above it,
// and what the classes above it took back by being turned away; never a slot held back from a
// higher class, with the limit a hard total. Under a limit of 10, critical holds back 2 of its
// 3 and standard 2 of its 4: standard's ceiling is 8 and sheddable's 6. Each class's first
// rejection lowers the ceilings below it by one.
func TestClassTakeOrder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		holds []string // classes that take every slot they can, in order
		want  []int    // how many each got
	}{
		{"sheddable alone: all but the never-lent parts", []string{"sheddable"}, []int{6}},
		{"standard alone: all but critical's", []string{"standard"}, []int{8}},
		{"critical alone: everything", []string{"critical"}, []int{10}},
		{"unknown is the lowest class", []string{"nosuch"}, []int{6}},
		{"empty name is the lowest class", []string{""}, []int{6}},
		{"sheddable first keeps both never-lent parts", []string{"sheddable", "standard", "critical"}, []int{6, 2, 2}},
		{"standard first keeps critical's", []string{"standard", "critical", "sheddable"}, []int{8, 2, 0}},
		{"critical first leaves nothing", []string{"critical", "standard", "sheddable"}, []int{10, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newClassed(t, 10, threeClasses)
			var all []Permit
			for i, class := range tc.holds {
				got := takeAll(t, l, class)
				require.Len(t, got, tc.want[i], class)
				all = append(all, got...)
			}
			require.Equal(t, len(all), l.InFlight())
			finishAll(all)
			require.Zero(t, l.InFlight())
			requireIdle(t, l)
		})
	}
}

// A class that is turned away takes back what it lent: the classes below it hold one slot
// more back for each call turned away, and get no slot until their calls have given enough
// back. A window in which no class above is turned away lends half of it again.
func TestClassTurnedAwayTakesBack(t *testing.T) {
	l, clock := newManual(t, Config{Classes: threeClasses, InitialLimit: 10, MinLimit: 10, MaxLimit: 10, MinWindowSamples: 1})
	shed := takeAll(t, l, "sheddable") // 6: the lent slots
	require.Len(t, shed, 6)
	crit := takeAll(t, l, "critical") // 4: the never-lent parts, at once
	require.Len(t, crit, 4)
	require.Equal(t, []int64{0, 3, 5}, classHolds(l), "turned away once: one slot more held back below")
	shed[0].Done(nil)
	_, err := l.AcquireClass("sheddable")
	require.ErrorIs(t, err, ErrLimitExceeded, "9 taken, sheddable's ceiling 5")
	c, err := l.AcquireClass("critical")
	require.NoError(t, err, "the slot sheddable gave back")
	// Critical is turned away 4 times more: sheddable's ceiling falls to 1, standard's to 3.
	for range 4 {
		_, err = l.AcquireClass("critical")
		require.ErrorIs(t, err, ErrLimitExceeded)
	}
	require.Equal(t, []int64{0, 7, 9}, classHolds(l))
	for range 20 {
		_, err = l.AcquireClass("critical")
		require.ErrorIs(t, err, ErrLimitExceeded)
	}
	require.Equal(t, []int64{0, 2 + 6, 4 + 6}, classHolds(l), "at most the 6 lent slots more: shut, sheddable's ceiling 0")
	snap := l.Snapshot()
	require.Equal(t, []uint64{25, 0, 2}, []uint64{snap.Classes[0].Rejected, snap.Classes[1].Rejected, snap.Classes[2].Rejected})

	// A window with a rejection of critical keeps them shut; one without halves what it took.
	clock.Advance(time.Second)
	shed[1].Done(nil)
	require.Equal(t, []int64{0, 2 + 6, 4 + 6}, classHolds(l), "critical was turned away in that window")
	clock.Advance(time.Second)
	shed[2].Done(nil)
	require.Equal(t, []int64{0, 2 + 3, 4 + 3}, classHolds(l), "a window without: half lent again")
	clock.Advance(time.Second)
	shed[3].Done(nil)
	require.Equal(t, []int64{0, 2 + 1, 4 + 1}, classHolds(l))
	finishAll(shed[4:])
	finishAll(crit)
	c.Done(nil)
	requireIdle(t, l)
}

// A class turned away holds back from the classes below it no more than the calls it lacked:
// as the window closes, what it took back beyond the calls turned away in the window is lent
// again, rather than kept idle for as long as it is turned away at all.
func TestClassTurnedAwayHoldsBackWhatItLacked(t *testing.T) {
	classes := []Class{{Name: "critical", Reserve: 0.2}, {Name: "sheddable"}} // 1 slot never lent at 10
	l, clock := newManual(t, Config{Classes: classes, InitialLimit: 10, MinLimit: 10, MaxLimit: 10, MinWindowSamples: 1})
	crit := takeAll(t, l, "critical") // its own calls alone fill the limit
	require.Len(t, crit, 10)
	for range 10 {
		_, err := l.AcquireClass("critical")
		require.ErrorIs(t, err, ErrLimitExceeded)
	}
	require.Equal(t, []int64{0, 1 + 9}, classHolds(l), "sheddable shut: the 9 lent slots taken back")

	// The next window turns 2 critical calls away: sheddable is held back from 2 slots more
	// than the never-lent part, not from all of them.
	clock.Advance(time.Second)
	crit[0].Done(nil)
	require.Equal(t, []int64{0, 1 + 9}, classHolds(l), "critical turned away in the window that closed")
	c, err := l.AcquireClass("critical")
	require.NoError(t, err, "the slot critical gave back")
	for range 2 {
		_, err := l.AcquireClass("critical")
		require.ErrorIs(t, err, ErrLimitExceeded)
	}
	clock.Advance(time.Second)
	crit[1].Done(nil)
	require.Equal(t, []int64{0, 1 + 2}, classHolds(l), "2 turned away in the window that closed")
	finishAll(crit[2:])
	c.Done(nil)
	requireIdle(t, l)
}

// A class turned away in many short bursts holds back the slots its calls would have held,
// not one slot per call: 20 calls turned away in a window of 101 calls, at most 10 at once,
// would have held 2 slots through it (Little's law), so sheddable is held back from 2 slots
// besides the never-lent part, where it was shut for the whole window. Within a window that
// follows one with calls turned away, calls turned away take back at most needFactor times
// the slots lacked in it, not every lent slot.
func TestClassTurnedAwayHoldsBackTheSlotsItLacked(t *testing.T) {
	classes := []Class{{Name: "critical", Reserve: 0.2}, {Name: "sheddable"}} // 1 slot never lent at 10
	l, clock := newManual(t, Config{Classes: classes, InitialLimit: 10, MinLimit: 10, MaxLimit: 10, MinWindowSamples: 1})
	crit := takeAll(t, l, "critical")
	require.Len(t, crit, 10)
	clock.Advance(time.Second)
	crit[0].Done(nil) // closes the first window
	require.Equal(t, []int64{0, 1 + 1}, classHolds(l), "1 turned away in a window of 1 call: 1 slot")

	for i := range 100 {
		p, err := l.AcquireClass("critical")
		require.NoError(t, err)
		if i%5 == 0 {
			_, err = l.AcquireClass("critical")
			require.ErrorIs(t, err, ErrLimitExceeded)
		}
		p.Done(nil)
	}
	require.Equal(t, []int64{0, 1 + needFactor}, classHolds(l), "one slot back per call turned away, up to needFactor times the 1 slot lacked in the last window, below the 9 lent")
	clock.Advance(time.Second)
	crit[1].Done(nil)
	require.Equal(t, []int64{0, 1 + 2}, classHolds(l), "20 calls of 101 turned away, 10 at once: 2 slots")
	s := l.Snapshot()
	require.Equal(t, 101, s.Last.Samples)
	require.Equal(t, 10, s.Last.MaxInFlight)

	extra, err := l.AcquireClass("critical")
	require.NoError(t, err)
	for range 20 {
		p, err := l.AcquireClass("critical")
		require.NoError(t, err)
		_, err = l.AcquireClass("critical")
		require.ErrorIs(t, err, ErrLimitExceeded)
		p.Done(nil)
	}
	require.Equal(t, []int64{0, 1 + min(2*needFactor, 9)}, classHolds(l), "up to needFactor times the 2 slots lacked in the last window, and the 9 lent")
	extra.Done(nil)
	finishAll(crit[2:])
	requireIdle(t, l)
}

// Acquire is the lowest class; AcquireContext and Do use the context's class.
func TestClassEntryPoints(t *testing.T) {
	l := newClassed(t, 10, threeClasses)
	ctx := WithClass(context.Background(), "critical")
	name, ok := ClassFromContext(ctx)
	require.True(t, ok)
	require.Equal(t, "critical", name)
	_, ok = ClassFromContext(context.Background())
	require.False(t, ok)

	plain := acquireN(t, l, 6)
	_, err := l.Acquire()
	require.ErrorIs(t, err, ErrLimitExceeded, "Acquire is the lowest class: its ceiling is 6")
	_, err = l.AcquireContext(context.Background())
	require.ErrorIs(t, err, ErrLimitExceeded, "no class in the context: the lowest")
	_, err = l.AcquireContext(WithClass(context.Background(), "bogus"))
	require.ErrorIs(t, err, ErrLimitExceeded, "an unknown class: the lowest")
	p, err := l.AcquireContext(ctx)
	require.NoError(t, err)
	v, err := Do(WithClass(context.Background(), "standard"), l, func(context.Context) (int, error) {
		require.Equal(t, 1, l.Snapshot().Classes[1].InFlight)
		return 7, nil
	})
	require.NoError(t, err)
	require.Equal(t, 7, v)
	require.Equal(t, []int{1, 0, 6}, classInFlight(l))
	p.Done(nil)
	finishAll(plain)
	requireIdle(t, l)

	// A limiter without classes ignores them.
	plainLimiter, err := New(Config{InitialLimit: 1})
	require.NoError(t, err)
	q, err := plainLimiter.AcquireClass("critical")
	require.NoError(t, err)
	_, err = plainLimiter.AcquireContext(ctx)
	require.ErrorIs(t, err, ErrLimitExceeded)
	q.Done(nil)
	require.Nil(t, plainLimiter.Snapshot().Classes)
}

func TestClassFinishing(t *testing.T) {
	l := newClassed(t, 10, threeClasses)
	p, err := l.AcquireClass("critical")
	require.NoError(t, err)
	q := copyOf(&p)
	p.Done(nil)
	p.Done(nil) // cleared: nothing
	require.Panics(t, func() { q.Done(nil) }, "a copy finished twice")
	requireIdle(t, l)

	p, _ = l.AcquireClass("standard")
	p.Finish(Drop)
	p, _ = l.AcquireClass("standard")
	p.Finish(Ignore)
	p, _ = l.AcquireClass("standard")
	p.Done(errors.New("not about load"))
	requireIdle(t, l)
	snap := l.Snapshot()
	require.Equal(t, [4]uint64{1, 1, 2, 0}, [4]uint64{snap.Successes, snap.Drops, snap.Ignored, snap.Cancelled})
	p, _ = l.AcquireClass("standard")
	p.Cancel()
	require.Equal(t, uint64(1), l.Snapshot().Cancelled)

	// A DropOn or a Clock that panics frees the slot, and the panic goes on.
	boom, err := New(Config{Classes: threeClasses, InitialLimit: 10, MaxLimit: 10,
		DropOn: func(error) bool { panic("dropOn") }})
	require.NoError(t, err)
	p, _ = boom.AcquireClass("critical")
	require.PanicsWithValue(t, "dropOn", func() { p.Done(errors.New("x")) })
	requireIdle(t, boom)
	clock := &panickyClock{}
	boom, err = New(Config{Classes: threeClasses, InitialLimit: 10, MaxLimit: 10, Clock: clock})
	require.NoError(t, err)
	clock.panics = true
	require.PanicsWithValue(t, "clock", func() { _, _ = boom.AcquireClass("critical") })
	requireIdle(t, boom)
	clock.panics = false
	p, _ = boom.AcquireClass("critical")
	clock.panics = true
	require.PanicsWithValue(t, "clock", func() { p.Done(nil) })
	requireIdle(t, boom)
}

// When the limit moves, the reserves and their never-lent parts follow it; below what calls
// hold, no call is admitted until they are back under it.
func TestClassLimitMoves(t *testing.T) {
	l := newClassed(t, 10, threeClasses)
	shed := takeAll(t, l, "sheddable") // 6
	require.Len(t, shed, 6)

	require.Equal(t, int64(20), l.setLimit(20)) // reserves 6 and 8, never-lent 3 and 4: sheddable's ceiling 13
	require.Equal(t, []int{6, 8, 0}, classReserved(l))
	require.Equal(t, []int64{0, 3, 7}, classHolds(l))
	more := takeAll(t, l, "sheddable")
	require.Len(t, more, 7)
	std := takeAll(t, l, "standard") // up to its ceiling of 17
	require.Len(t, std, 4)

	require.Equal(t, int64(6), l.setLimit(4)) // reserves 1 and 1, never-lent 1 and 1, on top of 4: 17 held
	require.Equal(t, []int{1, 1, 0}, classReserved(l))
	for _, class := range []string{"critical", "standard", "sheddable"} {
		_, err := l.AcquireClass(class)
		require.ErrorIs(t, err, ErrLimitExceeded, "%s: 17 held under a limit of 6", class)
	}
	finishAll(more)
	finishAll(std) // 6 held
	_, err := l.AcquireClass("critical")
	require.ErrorIs(t, err, ErrLimitExceeded, "6 held under a limit of 6")
	finishAll(shed[:2]) // 4 held
	crit := takeAll(t, l, "critical")
	require.Len(t, crit, 2, "back under the limit by two")
	require.Equal(t, 6, l.InFlight())
	finishAll(crit)
	finishAll(shed[2:])
	requireIdle(t, l)
}

// A reserve's never-lent part is its class's at once, whatever the classes below it hold,
// also when the limit falls below what they hold: once they are back under it.
func TestClassNeverLentAtOnce(t *testing.T) {
	l := newClassed(t, 20, threeClasses)
	shed := takeAll(t, l, "sheddable")
	require.Len(t, shed, 13)
	std := takeAll(t, l, "standard")
	require.Len(t, std, 4, "up to its ceiling: critical's never-lent 3 are left")
	crit := takeAll(t, l, "critical")
	require.Len(t, crit, 3, "at once")
	finishAll(crit)
	require.Equal(t, int64(9), l.setLimit(7)) // never-lent 1 and 1, on top of 7: 17 held
	finishAll(shed[:10])                      // 7 held: sheddable's and standard's ceilings are 7 - 1 and 8 - 1
	_, err := l.AcquireClass("sheddable")
	require.ErrorIs(t, err, ErrLimitExceeded)
	_, err = l.AcquireClass("standard")
	require.ErrorIs(t, err, ErrLimitExceeded)
	crit = takeAll(t, l, "critical")
	require.Len(t, crit, 2, "the rest of the limit, critical's never-lent part among it, at once")
	finishAll(crit)
	finishAll(std)
	finishAll(shed[10:])
	requireIdle(t, l)
}

// With MaxWait, freed slots go to the waiters of the highest class first, each under its
// class's ceiling.
func TestClassWaiters(t *testing.T) {
	l, err := New(Config{Classes: threeClasses, InitialLimit: 10, MaxLimit: 10, MaxWait: time.Minute})
	require.NoError(t, err)
	critical := takeAll(t, l, "critical")
	ctx := context.Background()
	got := make(chan string, 3)
	wait := func(class string) {
		go func() {
			p, err := l.AcquireContext(WithClass(ctx, class))
			if err != nil {
				got <- "error: " + err.Error()
				return
			}
			got <- class
			defer p.Done(nil)
			<-ctx.Done()
		}()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wait("sheddable")
	waitFor(t, func() bool { return l.Snapshot().Waiting == 1 })
	wait("standard")
	waitFor(t, func() bool { return l.Snapshot().Waiting == 2 })
	wait("critical")
	waitFor(t, func() bool { return l.Snapshot().Waiting == 3 })

	var order []string
	for i := 0; len(order) < 3; i++ {
		critical[i].Done(nil)
		select {
		case class := <-got:
			order = append(order, class)
		case <-time.After(10 * time.Millisecond):
		}
	}
	require.Equal(t, []string{"critical", "standard", "sheddable"}, order)
	require.Zero(t, l.Snapshot().Waiting)

	// A waiter that gives up is rejected in its class.
	short, err := New(Config{Classes: threeClasses, InitialLimit: 1, MaxLimit: 1, MaxWait: time.Millisecond})
	require.NoError(t, err)
	p, err := short.AcquireClass("critical")
	require.NoError(t, err)
	_, err = short.AcquireContext(WithClass(ctx, "critical"))
	require.ErrorIs(t, err, ErrLimitExceeded)
	require.Equal(t, uint64(1), short.Snapshot().Classes[0].Rejected)
	require.Equal(t, uint64(1), short.Snapshot().Rejected)
	require.Equal(t, uint64(1), short.Snapshot().WaitAbandoned)
	p.Done(nil)
	requireIdle(t, short)

	// One waiter more than MaxWaiters is rejected at once, in its class.
	bounded, err := New(Config{Classes: threeClasses, InitialLimit: 1, MaxLimit: 1, MaxWait: time.Minute, MaxWaiters: 1})
	require.NoError(t, err)
	p, err = bounded.AcquireClass("critical")
	require.NoError(t, err)
	waiting, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() {
		_, err := bounded.AcquireContext(WithClass(waiting, "critical"))
		done <- err
	}()
	waitFor(t, func() bool { return bounded.Snapshot().Waiting == 1 })
	_, err = bounded.AcquireContext(WithClass(ctx, "standard"))
	require.ErrorIs(t, err, ErrLimitExceeded)
	require.Equal(t, uint64(1), bounded.Snapshot().Classes[1].Rejected)
	stop()
	require.ErrorIs(t, <-done, context.Canceled)
	p.Done(nil)
	requireIdle(t, bounded)
	cancel()
}

// A dry run admits every call and counts, per class, the calls it would have rejected; a
// disabled limiter measures nothing.
func TestClassDryRunAndDisabled(t *testing.T) {
	l, err := New(Config{Classes: threeClasses, InitialLimit: 10, MaxLimit: 10, DryRun: true})
	require.NoError(t, err)
	shed := acquireN(t, l, 7)
	std := make([]Permit, 0, 6)
	for range 6 {
		p, err := l.AcquireClass("standard")
		require.NoError(t, err)
		std = append(std, p.Move())
	}
	snap := l.Snapshot()
	require.True(t, snap.DryRun)
	require.Equal(t, 13, snap.InFlight)
	require.Equal(t, []int{0, 6, 7}, classInFlight(l))
	require.Equal(t, uint64(1), snap.Classes[2].Rejected, "the 7th above its ceiling of 6")
	require.Equal(t, uint64(5), snap.Classes[1].Rejected, "the 9th to 13th above its ceiling of 8")
	require.Equal(t, uint64(6), snap.Rejected)
	finishAll(shed)
	finishAll(std)
	requireIdle(t, l)

	off, err := New(Config{Classes: threeClasses, Disabled: true})
	require.NoError(t, err)
	p, err := off.AcquireClass("critical")
	require.NoError(t, err)
	p.Done(nil)
	require.True(t, off.Snapshot().Disabled)
}

func TestClassConfigErrors(t *testing.T) {
	nine := make([]Class, 9)
	for i := range nine {
		nine[i].Name = string(rune('a' + i))
	}
	for _, tc := range []struct {
		classes []Class
		rule    string
	}{
		{[]Class{{"a", 0.6}, {"b", 0.5}}, "add up to 1.1"},
		{[]Class{{"a", -0.1}}, `class "a": reserve -0.1 must lie in [0, 1]`},
		{[]Class{{"a", math.NaN()}}, "reserve NaN must lie in [0, 1]"},
		{[]Class{{"a", math.Inf(1)}}, "must lie in [0, 1]"},
		{[]Class{{"a", 1.5}}, "must lie in [0, 1]"},
		{[]Class{{"a", 0}, {"a", 0}}, `class "a" is named twice`},
		{[]Class{{"a", 0}, {"", 0}}, "class 2 has no name"},
		{nine, "at most 8 classes"},
	} {
		_, err := New(Config{Name: "api", Classes: tc.classes})
		var ce *ConfigError
		require.ErrorAs(t, err, &ce, "%v", tc.classes)
		require.Equal(t, "R4C-REG-001", ce.Code())
		require.ErrorIs(t, err, ErrInvalidTuning)
		require.Equal(t, "classes", ce.Key)
		require.Equal(t, formatClasses(tc.classes), ce.Value)
		require.Contains(t, ce.Rule, tc.rule)
		require.True(t, strings.HasPrefix(err.Error(), `R4C-REG-001: adaptive limit "api": classes = `), err.Error())
	}
	for _, ok := range [][]Class{nil, {}, {{"a", 0.3}, {"b", 0.4}, {"c", 0.3}}, {{"a", 1}}, nine[:8]} {
		_, err := New(Config{Classes: ok})
		require.NoError(t, err, "%v", ok)
	}
}

// The classes key, through a registry and .properties.
func TestClassesKey(t *testing.T) {
	props, err := ParseProperties(strings.NewReader(
		"instances.api.adaptiveLimit.classes=critical:0.3, standard:0.4 ,sheddable:0\n" +
			"instances.api.adaptiveLimit.maxLimit=10\ninstances.api.adaptiveLimit.initialLimit=10\n"))
	require.NoError(t, err)
	r, err := NewRegistry(RegistryConfig{Properties: props})
	require.NoError(t, err)
	l, err := r.Limiter("api", Site{})
	require.NoError(t, err)
	require.Equal(t, threeClasses, l.cfg.Classes)
	require.Equal(t, []int{3, 4, 0}, classReserved(l))
	same, err := r.Limiter("api", Site{Attrs: Config{Classes: threeClasses}})
	require.NoError(t, err, "equal classes are the same configuration")
	require.Same(t, l, same)
	r, err = NewRegistry(RegistryConfig{})
	require.NoError(t, err)
	_, err = r.Limiter("a", Site{Name: "shared", Attrs: Config{Classes: threeClasses}})
	require.NoError(t, err)
	_, err = r.Limiter("b", Site{Name: "shared", Attrs: Config{Classes: threeClasses[:2]}})
	require.ErrorIs(t, err, ErrConfigConflict)
	require.ErrorContains(t, err, "classes = critical:0.3,standard:0.4: ")

	for _, tc := range []struct{ text, rule string }{
		{"critical", "must be name:reserve pairs"},
		{"critical:lots", "must be name:reserve pairs"},
		{"a:0.6,b:0.6", "add up to 1.2"},
		{"a:0,a:0", "named twice"},
		{":0.5", "has no name"},
	} {
		props, err := ParseProperties(strings.NewReader("x=1\n\ninstances.api.adaptiveLimit.classes=" + tc.text + "\n"))
		require.NoError(t, err)
		_, err = NewRegistry(RegistryConfig{Properties: props})
		var ce *ConfigError
		require.ErrorAs(t, err, &ce, tc.text)
		require.Equal(t, "instances.api.adaptiveLimit.classes", ce.Key)
		require.Equal(t, tc.text, ce.Value)
		require.Equal(t, 3, ce.Line)
		require.Contains(t, ce.Rule, tc.rule)
		require.Equal(t, "R4C-REG-001", ce.Code())
	}
	var c Config
	rule, _ := keyNamed("classes").set(&c, "none")
	require.Empty(t, rule)
	require.Nil(t, c.Classes)
}

// The caller's slice may change after New: the limiter keeps its own.
func TestClassesCopied(t *testing.T) {
	classes := []Class{{"a", 0.5}, {"b", 0}}
	l := newClassed(t, 10, classes)
	classes[0].Name = "changed"
	require.Equal(t, "a", l.cfg.Classes[0].Name)
	require.Equal(t, "a", l.Snapshot().Classes[0].Name)
}

func TestClassNoAllocations(t *testing.T) {
	for _, clock := range []Clock{TickClock(), NanotimeClock(), TimeClock()} {
		l, err := New(Config{Classes: threeClasses, Clock: clock, InitialLimit: 1000, MaxLimit: 1000})
		require.NoError(t, err)
		ctx := WithClass(context.Background(), "standard")
		require.Zero(t, testing.AllocsPerRun(1000, func() {
			p, _ := l.AcquireClass("critical")
			p.Done(nil)
			p, _ = l.Acquire()
			p.Cancel()
			p, _ = l.AcquireContext(ctx)
			p.Done(nil)
		}), "admit + finish")
		full := newClassed(t, 1, threeClasses)
		_, err = full.AcquireClass("critical")
		require.NoError(t, err)
		require.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = full.AcquireClass("critical") }), "reject")
		require.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = full.AcquireClass("sheddable") }), "reject the lowest")
		require.Zero(t, testing.AllocsPerRun(1000, func() {
			if s := l.Snapshot(); len(s.Classes) != 3 || s.Classes[2].Name != "sheddable" {
				panic("a snapshot without its classes")
			}
		}), "snapshot")
	}
	l, clock := newManual(t, Config{Classes: threeClasses, MinWindowSamples: 1, Window: time.Millisecond})
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		p, _ := l.AcquireClass("sheddable")
		clock.Advance(time.Millisecond)
		p.Done(nil)
	}), "a call that closes a window")
}

// Classes lists the class names highest first, in a copy; nil without classes.
func TestClassesNames(t *testing.T) {
	l := newClassed(t, 10, threeClasses)
	names := l.Classes()
	require.Equal(t, []string{"critical", "standard", "sheddable"}, names)
	names[0] = "changed"
	require.Equal(t, []string{"critical", "standard", "sheddable"}, l.Classes(), "the caller's copy")

	plain, err := New(Config{})
	require.NoError(t, err)
	require.Nil(t, plain.Classes())
	require.Panics(t, func() { (&Limiter{}).Classes() })
}

// A call that names a class the limiter lacks goes to the lowest class, and is counted; ""
// names none and is not. The count is monotone and counts rejected calls too.
func TestClassUnknownCounted(t *testing.T) {
	l := newClassed(t, 10, threeClasses)
	require.Zero(t, l.Snapshot().UnknownClass)

	p, err := l.AcquireClass("bogus")
	require.NoError(t, err)
	require.Equal(t, []int{0, 0, 1}, classInFlight(l), "the lowest class")
	require.Equal(t, uint64(1), l.Snapshot().UnknownClass)

	q, err := l.AcquireContext(WithClass(context.Background(), "critical "))
	require.NoError(t, err)
	require.Equal(t, []int{0, 0, 2}, classInFlight(l))
	require.Equal(t, uint64(2), l.Snapshot().UnknownClass, "through the context")

	for _, known := range []func() (Permit, error){
		func() (Permit, error) { return l.AcquireClass("critical") },
		func() (Permit, error) { return l.AcquireClass("") },
		l.Acquire,
		func() (Permit, error) { return l.AcquireContext(context.Background()) },
		func() (Permit, error) { return l.AcquireContext(WithClass(context.Background(), "standard")) },
		func() (Permit, error) {
			return Do(WithClass(context.Background(), "sheddable"), l, func(context.Context) (Permit, error) { return Permit{}, nil })
		},
	} {
		r, err := known()
		require.NoError(t, err)
		r.Done(nil)
	}
	require.Equal(t, uint64(2), l.Snapshot().UnknownClass, "known names, \"\" and no class are not counted")

	held := takeAll(t, l, "sheddable")
	_, err = l.AcquireClass("nope")
	require.ErrorIs(t, err, ErrLimitExceeded)
	require.Equal(t, uint64(3), l.Snapshot().UnknownClass, "a rejected call is counted too")
	finishAll(held)
	p.Done(nil)
	q.Done(nil)

	// A limiter without classes counts nothing.
	plain, err := New(Config{})
	require.NoError(t, err)
	r, err := plain.AcquireClass("bogus")
	require.NoError(t, err)
	r.Done(nil)
	require.Zero(t, plain.Snapshot().UnknownClass)
}

// The count adds up across goroutines: no count is lost.
func TestClassUnknownCountedConcurrently(t *testing.T) {
	l := newClassed(t, 1000, threeClasses)
	const goroutines, calls = 8, 500
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range calls {
				if p, err := l.AcquireClass("unknown"); err == nil {
					p.Done(nil)
				}
			}
		})
	}
	wg.Wait()
	require.Equal(t, uint64(goroutines*calls), l.Snapshot().UnknownClass)
}

// A class shut by calls turned away above it reopens on time, with no call in flight and none
// finishing (issue 36): under a limit of 5, critical fills it, is turned away 5 times and
// finishes, and then only sheddable calls come, none of which finishes a call. The first one
// after the window ends closes it, critical having turned calls away in it; the first one
// after the next, quiet, window ends lends half again, and is admitted.
func TestClassShutReopensOnTime(t *testing.T) {
	classes := []Class{{Name: "critical"}, {Name: "sheddable"}}
	l, clock := newManual(t, Config{Classes: classes, InitialLimit: 5, MinLimit: 5, MaxLimit: 5, MinWindowSamples: 1000})
	crit := takeAll(t, l, "critical")
	require.Len(t, crit, 5)
	for range 4 { // takeAll was turned away once
		_, err := l.AcquireClass("critical")
		require.ErrorIs(t, err, ErrLimitExceeded)
	}
	finishAll(crit) // too few samples to close a window, were it over
	require.Equal(t, []int64{0, 5}, classHolds(l), "sheddable shut")
	ask := func() error {
		_, err := l.AcquireClass("sheddable")
		return err
	}
	for range 3 {
		for range 300 {
			require.ErrorIs(t, ask(), ErrLimitExceeded, "within the window critical was turned away in")
			clock.Advance(time.Millisecond)
		}
	}
	clock.Advance(100 * time.Millisecond) // the window is over
	require.ErrorIs(t, ask(), ErrLimitExceeded, "the close of a window in which critical was turned away")
	require.Equal(t, []int64{0, 5}, classHolds(l))
	clock.Advance(time.Second - time.Millisecond)
	require.ErrorIs(t, ask(), ErrLimitExceeded, "the next window is not over")
	clock.Advance(time.Millisecond)
	p, err := l.AcquireClass("sheddable")
	require.NoError(t, err, "two windows after critical's last call turned away, the call that closes the quiet one")
	require.Equal(t, []int64{0, 2}, classHolds(l), "half of the 5 lent again")
	p.Done(nil)
	require.Zero(t, l.Snapshot().Windows, "no window had samples enough to move the limit")
}
