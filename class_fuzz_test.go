package adaptivelimit

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// Any classes give a limiter or a *ConfigError, never a panic; over any sequence of calls of
// any class, finishes and moves of the limit, one call at a time (no window closes): a call
// is admitted only below its class's ceiling, and rejected only at it (no false rejection),
// the ceiling being the limit less the never-lent parts of the reserves above and one slot
// for each call of a class above that was turned away, up to the limit (a model kept here);
// the highest class's ceiling is the limit and no class's is above a higher one's (borrowing
// only downwards); and each class's count in flight, and the limiter's, are exact.
func FuzzClasses(f *testing.F) {
	f.Add("critical:0.3,standard:0.4,sheddable:0", uint16(10), []byte{0, 1, 2, 2, 2, 2, 0x80, 0x41, 1, 1, 0xc3, 0, 0, 0x82})
	f.Add("a:1", uint16(3), []byte{0, 0, 0, 0, 0xc1, 0x80, 0})
	f.Add("a:0,b:0,c:0,d:0,e:0,f:0,g:0,h:0", uint16(1), []byte{7, 6, 0x80, 5, 0xff})
	f.Add("x:0.5,y:0.6", uint16(10), []byte{0})
	f.Add("hi:0.5,lo:0", uint16(9), []byte{1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0x81, 1})
	f.Add("hi:0.5,lo:0", uint16(20), []byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xca, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0, 0, 0})
	f.Fuzz(func(t *testing.T, text string, limit uint16, ops []byte) {
		classes, ok := parseClasses(text)
		if !ok {
			return
		}
		lim := int(limit)%64 + 1
		l, err := New(Config{Classes: classes, InitialLimit: lim, MinLimit: 1, MaxLimit: 64, Clock: NewManualClock()})
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
		for _, op := range ops {
			switch op >> 6 {
			case 0, 1: // a call of class op%n
				c := int(op) % n
				ceiling := int64(l.Limit() - neverLentAbove(classes, l.Limit(), c) - room[c])
				before := int64(len(held))
				p, err := l.AcquireClass(classes[c].Name)
				if err != nil {
					if before < ceiling {
						t.Fatalf("class %d rejected with %d held under its ceiling of %d", c, before, ceiling)
					}
					for d := c + 1; d < n; d++ {
						room[d] = min(room[d]+1, max(room[d], l.Limit()))
					}
					continue
				}
				if before >= ceiling {
					t.Fatalf("class %d admitted with %d held under its ceiling of %d", c, before, ceiling)
				}
				held = append(held, p.Move())
				byClass[c]++
			case 2: // finish the op%len(held)-th call
				if len(held) > 0 {
					i := int(op) % len(held)
					byClass[classOf(held[i].inFlight)]--
					held[i].Done(nil)
					held = append(held[:i], held[i+1:]...)
				}
			case 3: // move the limit
				l.setLimit(int64(op&0x3f) + 1)
			}
			if h := cs.ceilings.hold(0); h != 0 {
				t.Fatalf("the highest class's ceiling is %d below the limit", h)
			}
			for c := 1; c < n; c++ {
				if cs.ceilings.hold(c) < cs.ceilings.hold(c-1) {
					t.Fatalf("class %d's ceiling above class %d's: %v", c, c-1, classHolds(l))
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
		requireClassesIdle(t, l)
	})
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
