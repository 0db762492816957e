package adaptivelimit

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"
)

// Any classes give a limiter or a *ConfigError, never a panic; over any sequence of calls of
// any class, finishes, moves of the limit and windows' ends, one call at a time: a call is
// admitted only below its class's ceiling, and rejected only at it (no false rejection), the
// ceiling being the limit less the never-lent parts of the reserves above and what the calls
// turned away above took back (a model kept here): one slot for each such call, up to the
// lent slots, the limit less every never-lent part; as a window closes, half of it where no
// class above turned a call away in the window, and otherwise no more than the slots they
// lacked, the calls turned away times the window's most calls in flight over its samples,
// rounded up, and at most one a call; and never more than the lent slots. A window closes
// once it is over, at the next finish or at the next call turned away while slots that the
// classes above took back lie free, and at no other time: so lending resumes on time whether
// calls finish or not. The highest class's ceiling is the limit and no class's is above a
// higher one's (borrowing only downwards); while the limit moved only as windows closed, each
// class may take the never-lent parts of its own reserve and those below it with nothing
// else in flight; and each class's count in flight, and the limiter's, are exact.
func FuzzClasses(f *testing.F) {
	f.Add("critical:0.3,standard:0.4,sheddable:0", uint16(10), []byte{0, 1, 2, 2, 2, 2, 0x80, 0x41, 1, 1, 0xc3, 0, 0, 0x82})
	f.Add("a:1", uint16(3), []byte{0, 0, 0, 0, 0xc1, 0x80, 0})
	f.Add("a:0,b:0,c:0,d:0,e:0,f:0,g:0,h:0", uint16(1), []byte{7, 6, 0x80, 5, 0xff})
	f.Add("x:0.5,y:0.6", uint16(10), []byte{0})
	f.Add("hi:0.5,lo:0", uint16(9), []byte{1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0x81, 1})
	f.Add("hi:0.5,lo:0", uint16(20), []byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xca, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0, 0, 0})
	// Windows that close: one with a call turned away above, with more samples than it, and
	// one without, in which the slots taken back are lent again by half.
	f.Add("hi:0.2,lo:0", uint16(9), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0x80, 0, 0x80, 0, 0x80, 0, 0x80, 0, 0x80, 0, 0x80, 0, 0x80, 0, 0x80, 0, 0x80, 0, 0x80, 0, 0x80, 0, 0x80, 0, 0x80, 0, 0x80, 0, 0x80, 0, 0x80, 0, 0x80, 0, 0x80, 0, 0x80, 0, 0xff, 0x80, 0x80, 0x80, 0x80, 1, 1, 0xff, 0x80, 1, 1})
	// A window without a call turned away above, after one with, lends half.
	f.Add("hi:0,lo:0", uint16(9), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xfe, 0, 0, 0, 0, 0xff, 0x80, 0x80, 0x80, 0x80, 0xff, 0x80, 1})
	// A window with fewer samples than calls in flight: each call turned away lacked one slot at most.
	f.Add("hi:0.2,lo:0", uint16(10), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0x80, 0, 0x89, 0, 0x89, 0, 0x89, 0, 0, 0x89, 0xff, 0x80, 1, 1, 0xff, 0x80, 0xff, 0x80})
	f.Add("a:0.3,b:0.3,c:0", uint16(12), []byte{0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 0, 0, 0, 1, 0xff, 0x81, 0x80, 2, 1, 0xff, 0x82, 0, 0, 0, 0, 0, 0xff, 0x80, 0x80})
	// Issue 36: hi fills a limit of 5 and is turned away 5 times, then finishes and is quiet;
	// lo, with nothing in flight, closes the window that ended and, after a quiet one, gets in.
	f.Add("hi:0,lo:0", uint16(4), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 1, 0xff, 1, 1, 0xff, 1, 1, 1})
	// A limit of 10 with 3 slots never lent above lo, 10 calls turned away: lo's ceiling falls to
	// 0, not below, so that a quiet window gives it 4 slots.
	f.Add("hi:0.6,lo:0", uint16(9), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0x80, 0xff, 0x80, 1, 1, 1, 1, 1})
	// Eight classes at a limit of 5, the highest turned away: d and e keep their never-lent slot.
	f.Add("a:0.1,b:0.1,c:0.1,d:0.2,e:0.2,f:0.1,g:0.1,h:0.1", uint16(4), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 3, 4, 3, 4})
	f.Fuzz(func(t *testing.T, text string, limit uint16, ops []byte) {
		classes, ok := parseClasses(text)
		if !ok {
			return
		}
		lim := int(limit)%64 + 1
		clock := NewManualClock()
		l, err := New(Config{Classes: classes, InitialLimit: lim, MinLimit: 1, MaxLimit: 64, MinWindowSamples: 1, Clock: clock})
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Key != "classes" || ce.Code() == "" || ce.Rule == "" {
				t.Fatalf("New(%v) = %v: want a *ConfigError on classes", classes, err)
			}
			return
		}
		if len(classes) == 0 {
			return
		}
		cs := l.classes
		n := len(classes)
		var held []Permit
		byClass := make([]int, n)
		room := make([]int, n) // slots taken back from each class by calls turned away above it
		most := make([]int, n) // the most that calls turned away take back from each class in the window
		for c := range most {
			most[c] = math.MaxInt
		}
		turned := make([]int, n) // calls of each class turned away in the window
		windows, closes := l.Snapshot().Windows, cs.ceilings.closes.Load()
		over := false  // the window is over: the clock passed its end
		moved := false // the limit moved other than as a window closed
		// estimate is the limit that the algorithm set, of which the classes reserve their
		// shares; the limit is it with the never-lent parts above the lowest class on top.
		estimate := func() int { return int(cs.estimate) }
		// closed applies a window's close to the model where one closed since the last look,
		// and reports whether one did.
		closed := func() bool {
			if cs.ceilings.closes.Load() == closes {
				return false
			}
			closes, over, moved = cs.ceilings.closes.Load(), false, false
			samples, maxInFlight := 1, 1 // a window without samples, whose classes' part closes alone
			if s := l.Snapshot(); s.Windows != windows {
				windows = s.Windows
				samples, maxInFlight = s.Last.Samples, s.Last.MaxInFlight
			}
			closeModel(room, most, turned, samples, maxInFlight, lentSlots(classes, l.Limit(), estimate()))
			return true
		}
		for _, op := range ops {
			switch op >> 6 {
			case 0, 1: // a call of class op%n
				c := int(op) % n
				ceiling := func() int64 { return int64(l.Limit() - neverLentAbove(classes, estimate(), c) - room[c]) }
				before := int64(len(held))
				// A call that finds no slot while slots that the classes above took back lie
				// free closes the window where it is over, and then tries again.
				idle := before >= ceiling() && room[c] != 0 && before < int64(l.Limit()-neverLentAbove(classes, estimate(), c))
				wasOver := over
				p, err := l.AcquireClass(classes[c].Name)
				switch {
				case closed():
					if !idle || !wasOver {
						t.Fatalf("a call of class %d closed a window: over %v, slots taken back from it idle %v", c, wasOver, idle)
					}
				case idle && wasOver:
					t.Fatalf("class %d turned away with %d held, %d taken back from it, after its window ended: no window closed", c, before, room[c])
				}
				if err != nil {
					if before < ceiling() {
						t.Fatalf("class %d rejected with %d held under its ceiling of %d", c, before, ceiling())
					}
					lent, bound := lentSlots(classes, l.Limit(), estimate()), 0
					for d := c + 1; d < n; d++ {
						bound = max(bound, min(lent, most[d])) // never less from a class than from the one above
						room[d] = min(room[d]+1, max(room[d], bound))
					}
					turned[c]++
					break
				}
				if before >= ceiling() {
					t.Fatalf("class %d admitted with %d held under its ceiling of %d", c, before, ceiling())
				}
				held = append(held, p.Move())
				byClass[c]++
			case 2: // finish the op%len(held)-th call
				wasOver := over
				if len(held) > 0 {
					i := int(op) % len(held)
					byClass[held[i].grant.class()]--
					held[i].Done(nil)
					held = append(held[:i], held[i+1:]...)
					if closed() != wasOver {
						t.Fatalf("a finish closed a window: %v, its window over: %v", !wasOver, wasOver)
					}
				}
			case 3:
				if op&0x3f == 0x3f { // end the window: the next finish closes it
					clock.Advance(time.Second)
					over = true
				} else { // move the limit
					l.setLimit(int64(op&0x3f) + 1)
					moved = true
				}
			}
			if want := min(estimate()+neverLentAbove(classes, estimate(), n-1), 64); l.Limit() != want {
				t.Fatalf("limit %d, want %d: %d with the never-lent parts above the lowest class on top", l.Limit(), want, estimate())
			}
			if h := cs.ceilings.hold(0); h != 0 {
				t.Fatalf("the highest class's ceiling is %d below the limit", h)
			}
			for c := 1; c < n; c++ {
				if cs.ceilings.hold(c) < cs.ceilings.hold(c-1) {
					t.Fatalf("class %d's ceiling above class %d's: %v", c, c-1, classHolds(l))
				}
			}
			for c := range n {
				own := neverLentAbove(classes, estimate(), n) - neverLentAbove(classes, estimate(), c)
				if got := int64(l.Limit()) - cs.ceilings.hold(c); !moved && got < int64(own) {
					t.Fatalf("class %d's ceiling %d, below the never-lent parts of its reserve and those below it, %d: %v", c, got, own, classHolds(l))
				}
			}
			if got := l.InFlight(); got != len(held) {
				t.Fatalf("InFlight %d, %d held", got, len(held))
			}
			if got := classInFlight(l); !slices.Equal(got, byClass) {
				t.Fatalf("classes in flight %v, want %v", got, byClass)
			}
		}
		finishAll(held)
		requireIdle(t, l)
	})
}

// closeModel is the model of a window's close: from each class below the classes that
// turned calls away in the window, it takes back no more than the slots those calls would
// have held, and from the classes below none that did, it lends half of what it took back;
// never more than lent, the lent slots at the limit after the close, and never less than it
// takes back from the class above.
func closeModel(room, most, turned []int, samples, maxInFlight, lent int) {
	above := 0
	for c := range room {
		if above == 0 {
			room[c] = min(room[c], lent) / 2
			most[c] = math.MaxInt
		} else {
			slots := (above*maxInFlight + samples - 1) / samples
			room[c] = min(room[c], slots, above, lent)
			most[c] = needFactor * min(slots, above)
		}
		if c > 0 {
			room[c] = max(room[c], room[c-1]) // never below what is held back from the class above
		}
		above += turned[c]
		turned[c] = 0
	}
}

// lentSlots is the model of the most that calls turned away take back from a class under
// limit, whose reserves are shares of estimate: the limit less every never-lent part.
func lentSlots(classes []Class, limit, estimate int) int {
	return max(limit-neverLentAbove(classes, estimate, len(classes)), 0)
}

// neverLentAbove is the model of what the reserves above class c never lend it under limit:
// of each reserve, floor(Reserve*limit) and no more than what the reserves before it leave
// of the limit, the half rounded up.
func neverLentAbove(classes []Class, limit, c int) int {
	kept, reserved := 0, 0
	for _, class := range classes[:c] {
		r := min(int(math.Floor(class.Reserve*float64(limit))), limit-reserved)
		reserved += r
		kept += r - r/2
	}
	return kept
}
