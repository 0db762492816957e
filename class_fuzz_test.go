package adaptivelimit

import (
	"errors"
	"testing"
)

// Any classes give a limiter or a *ConfigError, never a panic; over any sequence of calls of
// any class, finishes and moves of the limit, one call at a time: a call is admitted only
// under the limit, from its own reserve, the shared pool or a lower class's; it is rejected
// only where none of those has a free slot or the calls hold the limit; and the pools and the
// calls keep adding up to the limit.
func FuzzClasses(f *testing.F) {
	f.Add("critical:0.3,standard:0.4,sheddable:0", uint16(10), []byte{0, 1, 2, 2, 2, 2, 0x80, 0x41, 1, 1, 0xc3, 0, 0, 0x82})
	f.Add("a:1", uint16(3), []byte{0, 0, 0, 0, 0xc1, 0x80, 0})
	f.Add("a:0,b:0,c:0,d:0,e:0,f:0,g:0,h:0", uint16(1), []byte{7, 6, 0x80, 5, 0xff})
	f.Add("x:0.5,y:0.6", uint16(10), []byte{0})
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
		for _, op := range ops {
			switch op >> 6 {
			case 0, 1: // a call of class op%n
				c := int(op) % n
				before := len(held)
				p, err := l.AcquireClass(classes[c].Name)
				if err != nil {
					if len(held) >= l.Limit() {
						continue
					}
					for q := range cs.pools {
						if (q >= c) && cs.pools[q].n.Load() > 0 {
							t.Fatalf("class %d rejected with %d free in pool %d", c, cs.pools[q].n.Load(), q)
						}
					}
					continue
				}
				if before >= l.Limit() {
					t.Fatalf("admitted with %d held under a limit of %d", before, l.Limit())
				}
				if pool := int(p.inFlight>>poolShift&0xf) - 1; pool < c {
					t.Fatalf("class %d took a slot of class %d's reserve", c, pool)
				}
				held = append(held, p.Move())
			case 2: // finish the op%len(held)-th call
				if len(held) > 0 {
					i := int(op) % len(held)
					held[i].Done(nil)
					held = append(held[:i], held[i+1:]...)
				}
			case 3: // move the limit
				l.setLimit(int64(op&0x3f) + 1)
			}
			var free int64
			for q := range cs.pools {
				free += cs.pools[q].n.Load()
			}
			if free+int64(len(held)) != int64(l.Limit()) {
				t.Fatalf("%d free and %d held under a limit of %d", free, len(held), l.Limit())
			}
			if got := l.InFlight(); got != len(held) {
				t.Fatalf("InFlight %d, %d held", got, len(held))
			}
		}
		finishAll(held)
		requireClassesIdle(t, l)
	})
}
