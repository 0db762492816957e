package adaptivelimit

import "unsafe"

// index returns the index of the class called name: the lowest class where none is.
func (cs *classSet) index(name string) int {
	if c := cs.same(name); c >= 0 {
		return c
	}
	return cs.lookup(name)
}

// same returns the index of the class whose name is name's very bytes, or -1. A caller most
// often names a class with the constant that configured it, which shares its bytes, so this
// finds it with no call to compare them, and in one probe of byBytes whatever the class;
// lookup compares them.
func (cs *classSet) same(name string) int {
	p := unsafe.StringData(name)
	e := &cs.byBytes.entries[uintptr(unsafe.Pointer(p))>>(cs.byBytes.shift&63)%byBytesSize]
	if e.bytes == p && e.size == len(name) {
		return e.class
	}
	return -1
}

// lookup is index comparing the names' bytes. A name that no class has, other than "", is
// counted (Snapshot.UnknownClass): it is most often a typo or a class that a caller's
// configuration has and the limiter's lacks.
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

// byBytes is a table of the classes by the address of their names' bytes, indexed by bits
// of the address that New picks so that the classes' entries differ where it can: a class
// whose entry another one took is found by lookup, as any other name is.
type byBytes struct {
	shift   uint // below 64: see build
	entries [byBytesSize]struct {
		bytes *byte
		size  int
		class int
	}
}

// byBytesSize is twice ClassesCeiling, so that a shift that sets every class apart is found
// for most sets of addresses.
const byBytesSize = 2 * ClassesCeiling

// build fills the table with names, with the shift that gives the most of them an entry of
// their own.
func (t *byBytes) build(names []string) {
	slot := func(name string, shift uint) uintptr {
		return uintptr(unsafe.Pointer(unsafe.StringData(name))) >> shift % byBytesSize
	}
	best := -1
	for shift := uint(0); shift < 16; shift++ {
		var taken [byBytesSize]bool
		n := 0
		for _, name := range names {
			if s := slot(name, shift); !taken[s] {
				taken[s] = true
				n++
			}
		}
		if n > best {
			best, t.shift = n, shift
		}
	}
	for i := range t.entries {
		t.entries[i].class = -1
	}
	for c, name := range names {
		if e := &t.entries[slot(name, t.shift)]; e.class < 0 {
			e.bytes, e.size, e.class = unsafe.StringData(name), len(name), c
		}
	}
}
