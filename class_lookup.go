package adaptivelimit

import (
	"math"
	"math/bits"
	"unsafe"
)

// named returns the ceiling of the class called name: the lowest class's where none is.
func (cs *classSet) named(name string) *ceiling {
	if ce := cs.same(name); ce != nil {
		return ce
	}
	return &cs.ceilings.class[cs.lookup(name)]
}

// same returns the ceiling of the class whose name is name's very bytes, or nil, in one probe
// of byBytes: a caller most often names a class with the constant that configured it.
func (cs *classSet) same(name string) *ceiling {
	p := unsafe.StringData(name)
	e := &cs.byBytes.entries[uintptr(unsafe.Pointer(p))*cs.byBytes.mult>>(bits.UintSize-byBytesBits)]
	if e.bytes == p && e.size == len(name) {
		return e.ceiling
	}
	return nil
}

// lookup returns the class called name, comparing bytes, or the lowest, counting a name but ""
// (Snapshot.UnknownClass): a typo, or a class a caller's configuration has and this one lacks.
func (cs *classSet) lookup(name string) int {
	for i, n := range cs.names {
		if n == name {
			return i
		}
	}
	if name != "" {
		cs.countUnknown()
	}
	return len(cs.names) - 1
}

// byBytes is a table of the classes' ceilings by the address of their names' bytes, indexed
// by the top bits of the address times mult; a class whose entry another took is found by
// lookup, as any other name is.
type byBytes struct {
	mult    uintptr // odd: see build
	entries [1 << byBytesBits]struct {
		bytes   *byte
		size    int
		ceiling *ceiling
	}
}

// byBytesBits is the bits of the index in byBytes: its 16 entries are twice MaxClasses, so
// that a multiplier that sets every class apart is found for most sets of addresses.
const byBytesBits = 4

// golden is 2^64 over the golden ratio, odd, in a uintptr: the multiplier of Fibonacci
// hashing, whose odd multiples spread addresses over the top bits each their own way.
const golden = 0x9E3779B97F4A7C15 & math.MaxUint

// build fills the table with the ceilings of names, with the mult that sets most of them apart.
func (t *byBytes) build(names []string, cl *ceilings) {
	slot := func(name string, mult uintptr) uintptr {
		return uintptr(unsafe.Pointer(unsafe.StringData(name))) * mult >> (bits.UintSize - byBytesBits)
	}
	best := -1
	for k := uintptr(1); k < 32; k += 2 {
		var taken [1 << byBytesBits]bool
		n := 0
		for _, name := range names {
			if s := slot(name, golden*k); !taken[s] {
				taken[s] = true
				n++
			}
		}
		if n > best {
			best, t.mult = n, golden*k
		}
	}
	for c, name := range names {
		if e := &t.entries[slot(name, t.mult)]; e.ceiling == nil {
			e.bytes, e.size, e.ceiling = unsafe.StringData(name), len(name), &cl.class[c]
		}
	}
}
