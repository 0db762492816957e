package adaptivelimit

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"
)

// Class is a priority class of a limiter's calls. Config.Classes lists them highest priority
// first; the last one is the lowest, which Acquire and any unknown class name mean.
//
// A class reserves floor(Reserve*limit) slots of the limit; the slots that no class reserves
// are shared. A call takes a free slot of its own class's reserve, else a free shared slot,
// else a free slot reserved by a lower class, and never one reserved by a higher class. A
// slot it takes from another pool goes back there when the call finishes.
type Class struct {
	Name    string
	Reserve float64 // the share of the limit reserved for the class, in [0, 1]; all together at most 1
}

// ClassesCeiling is the most classes a limiter may have.
const ClassesCeiling = 8

// ClassSnapshot is one class's state at one moment.
type ClassSnapshot struct {
	Name     string
	Reserved int    // slots the class reserves under the limit now
	InFlight int    // calls of the class holding a slot now
	Rejected uint64 // calls of the class rejected; in a dry run, calls that would have been
}

// classSet is the state of a limiter with classes. Each pool counts its free slots: the
// reserve of each class, then the shared pool. The free slots and the calls holding one add
// up to the limit, so the limit is a hard total. A pool whose calls hold more than its share
// of a lower limit is below zero (short) until they finish, and while one is, a call is
// admitted only where the pools have a free slot in all (setLimit).
//
// A permit of a classed limiter carries its class and the pool it took its slot from in the
// high bits of its count in flight, so that a Permit is no larger.
type classSet struct {
	names   []string
	reserve []float64
	pools   []paddedCount // len(names)+1: each class's reserve, then the shared pool
	held    []classHolds  // calls that took and freed a slot, by class
	reject  []classCounts // rejections by class, in a power of two of stripes (rejected)
	shown   []monotone    // the most rejections by class a snapshot has reported
	unknown monotone      // the most calls of an unknown class a snapshot has reported
	dryRun  bool          // admit every call, counting those the pools would reject

	short paddedCount // pools below zero

	// Owned by the goroutine that sets the limit (New, then the window closer).
	shares   []int64        // each pool's share of the limit
	reserved []atomic.Int64 // floor(Reserve*limit), by class, for Snapshot

	queues []waitQueue // waiters by class; the limiter's waitQueue holds their lock and count
}

type paddedCount struct {
	n atomic.Int64
	_ [cacheLineSize - 8]byte
}

// classHolds are the calls of a class that took a slot and that freed one, on a line of
// their own. Counting both, rather than those that hold one, lets a count read them as
// stripes.held reads the stripes: never above the truth while calls start and finish.
type classHolds struct {
	acquired, released atomic.Int64
	_                  [cacheLineSize - 16]byte
}

// classCounts are one stripe's counts of rejections by class, and of the calls that named a
// class the limiter does not have (unknownIndex), on a line of their own.
type classCounts struct {
	n [ClassesCeiling + 1]uint64
	_ [cacheLineSize - (ClassesCeiling+1)*8]byte
}

// unknownIndex is where classCounts count the calls that named an unknown class.
const unknownIndex = ClassesCeiling

// The bits of a classed permit's inFlight above the count: the pool plus one (noPool plus one
// for a call of a dry run that no pool had a slot for), and the class. Every classed permit
// has a pool's bits, so that the count of a classless one never reads as a class.
const (
	poolShift  = 48
	classShift = 52
	countMask  = 1<<poolShift - 1
	noPool     = ClassesCeiling + 1 // the pool index of a dry run's call beyond the pools
)

func newClassSet(classes []Class, dryRun bool, stripes int) *classSet {
	n := len(classes)
	cs := &classSet{
		names:    make([]string, n),
		reserve:  make([]float64, n),
		pools:    make([]paddedCount, n+1),
		held:     make([]classHolds, n),
		reject:   make([]classCounts, stripes),
		shown:    make([]monotone, n),
		dryRun:   dryRun,
		shares:   make([]int64, n+1),
		reserved: make([]atomic.Int64, n),
		queues:   make([]waitQueue, n),
	}
	for i, c := range classes {
		cs.names[i], cs.reserve[i] = c.Name, c.Reserve
	}
	return cs
}

// index returns the index of the class called name: the lowest class where none is. A name
// that no class has, other than "", is counted (Snapshot.UnknownClass): it is most often a
// typo or a class that a caller's configuration has and the limiter's lacks.
func (cs *classSet) index(name string) int {
	for i, n := range cs.names {
		if n == name {
			return i
		}
	}
	if name != "" {
		cs.count(unknownIndex)
	}
	return len(cs.names) - 1
}

// take takes a free slot for a call of class c: from its reserve, the shared pool, or a lower
// class's reserve, in that order. It returns the pool, or -1 where none has a free slot, or
// where a pool is short and the pools have none in all.
func (cs *classSet) take(c int) int {
	if cs.short.n.Load() != 0 && !cs.underLimit() {
		return -1
	}
	if tryDecrement(&cs.pools[c].n) {
		return c
	}
	s := len(cs.names)
	if tryDecrement(&cs.pools[s].n) {
		return s
	}
	for j := c + 1; j < s; j++ {
		if tryDecrement(&cs.pools[j].n) {
			return j
		}
	}
	return -1
}

// tryDecrement takes one from a pool's free slots where it has one.
func tryDecrement(free *atomic.Int64) bool {
	for {
		f := free.Load()
		if f <= 0 {
			return false
		}
		if free.CompareAndSwap(f, f-1) {
			return true
		}
	}
}

// admit counts a call of class c that took a slot from pool (noPool in a dry run beyond the
// pools), and returns its permit's inFlight: the calls in flight of every class, itself
// included, at most limit and at least 1, with the class and pool above them.
func (cs *classSet) admit(c, pool int, limit int64) int64 {
	cs.held[c].acquired.Add(1)
	n := cs.holding()
	if !cs.dryRun {
		n = min(n, limit)
	}
	return max(n, 1) | int64(pool+1)<<poolShift | int64(c)<<classShift
}

// release frees the slot of a permit whose inFlight is f, and returns the count in flight it
// carried; false where the permit's class held no slot, leaving the counts as they were.
func (cs *classSet) release(f int64) (n int64, held bool) {
	c, pool := int(f>>classShift), int(f>>poolShift&0xf)-1
	if h := &cs.held[c]; h.released.Add(1) > h.acquired.Load() {
		h.released.Add(-1)
		return 0, false
	}
	if pool != noPool {
		cs.giveBack(pool)
	}
	return f & countMask, true
}

// giveBack returns a slot to its pool.
func (cs *classSet) giveBack(pool int) {
	if cs.pools[pool].n.Add(1) == 0 {
		cs.short.n.Add(-1) // the pool is no longer short
	}
}

// underLimit reports whether the pools have a free slot in all: fewer calls hold a slot than
// the limit. The pools are read one after the other, so beside the calls it is a moment's
// view: with a pool short, calls that start at once may pass together.
func (cs *classSet) underLimit() bool {
	var free int64
	for p := range cs.pools {
		free += cs.pools[p].n.Load()
	}
	return free > 0
}

// rejected counts a rejected call of class c.
func (cs *classSet) rejected(c int) { cs.count(c) }

// count adds one to count i of classCounts, with an atomic add on the stripe that a hash of
// the goroutine's stack address picks, so that goroutines counted at once seldom share a
// line and no count is lost: a plain increment there could erase other goroutines' counts
// when its goroutine is preempted between its load and its store.
func (cs *classSet) count(i int) {
	var onStack byte
	s := uint64(uintptr(unsafe.Pointer(&onStack))) * 0x9E3779B97F4A7C15 >> 32 & uint64(len(cs.reject)-1)
	atomic.AddUint64(&cs.reject[s].n[i], 1)
}

// counted returns count i of classCounts so far.
func (cs *classSet) counted(i int) uint64 {
	var n uint64
	for s := range cs.reject {
		n += atomic.LoadUint64(&cs.reject[s].n[i])
	}
	return n
}

// rejections returns the calls of class c rejected so far.
func (cs *classSet) rejections(c int) uint64 { return cs.shown[c].report(cs.counted(c)) }

// unknowns returns the calls so far that named a class the limiter does not have.
func (cs *classSet) unknowns() uint64 { return cs.unknown.report(cs.counted(unknownIndex)) }

// setLimit moves the pools to a new limit: each class reserves floor(Reserve*limit), and the
// shared pool holds the rest. Each pool moves by the change of its share, with an atomic add
// beside the calls, so that the pools and the calls keep adding up to the limit; the pools
// that lose slots move first, so that meanwhile they add up to no more than either limit. A
// pool whose calls hold more than its new share goes below zero, short, and its own calls
// give the slots back as they finish: the other pools keep their shares, a reserve stays its
// class's, and while a pool is short no call is admitted beyond the limit (take).
func (cs *classSet) setLimit(limit int64) {
	n := len(cs.names)
	var delta [ClassesCeiling + 1]int64
	var reserved int64
	for p := 0; p <= n; p++ {
		share := limit - reserved // the shared pool's, last
		if p < n {
			share = min(int64(math.Floor(cs.reserve[p]*float64(limit))), share) // reserves of 1 may round above it
			cs.reserved[p].Store(share)
			reserved += share
		}
		delta[p] = share - cs.shares[p]
		cs.shares[p] = share
	}
	for _, losing := range []bool{true, false} {
		for p := 0; p <= n; p++ {
			if d := delta[p]; d != 0 && d < 0 == losing {
				now := cs.pools[p].n.Add(d)
				switch before := now - d; {
				case before >= 0 && now < 0:
					cs.short.n.Add(1)
				case before < 0 && now >= 0:
					cs.short.n.Add(-1)
				}
			}
		}
	}
}

// inFlight returns the calls holding a slot, of every class.
func (cs *classSet) inFlight() int64 { return max(cs.holding(), 0) }

// holding counts the calls holding a slot: every class's calls that took one, less every
// class's calls that freed one, read afterwards. The first sum is no more than the slots
// taken at any moment between the two passes, and the second at least those freed by then,
// so the count is never above the truth at that moment, and exact when nothing runs beside
// it.
func (cs *classSet) holding() int64 {
	var n int64
	for i := range cs.held {
		n += cs.held[i].acquired.Load()
	}
	for i := range cs.held {
		n -= cs.held[i].released.Load()
	}
	return n
}

// holds is holding for class c alone.
func (cs *classSet) holds(c int) int64 {
	h := &cs.held[c]
	return max(h.acquired.Load()-h.released.Load(), 0)
}

func (cs *classSet) snapshots() []ClassSnapshot {
	s := make([]ClassSnapshot, len(cs.names))
	for i, name := range cs.names {
		s[i] = ClassSnapshot{
			Name:     name,
			Reserved: int(cs.reserved[i].Load()),
			InFlight: int(cs.holds(i)),
			Rejected: cs.rejections(i),
		}
	}
	return s
}

// classes checks Config.Classes: at most ClassesCeiling classes, each with a name of
// its own and a reserve in [0, 1], the reserves adding up to at most 1.
func (v *validator) classes(classes []Class) {
	fail := func(rule string) {
		v.fail("classes", formatClasses(classes), rule, ErrInvalidTuning)
	}
	if len(classes) > ClassesCeiling {
		fail(fmt.Sprintf("at most %d classes", ClassesCeiling))
		return
	}
	var sum float64
	for i, c := range classes {
		switch {
		case c.Name == "":
			fail(fmt.Sprintf("class %d has no name", i+1))
			return
		case !(c.Reserve >= 0 && c.Reserve <= 1):
			fail(fmt.Sprintf("class %q: reserve %v must lie in [0, 1]", c.Name, c.Reserve))
			return
		}
		for _, d := range classes[:i] {
			if d.Name == c.Name {
				fail(fmt.Sprintf("class %q is named twice", c.Name))
				return
			}
		}
		sum += c.Reserve
	}
	if sum > 1+reserveSlack {
		fail(fmt.Sprintf("the reserves add up to %v: at most 1", sum))
	}
}

// reserveSlack lets reserves that add up to 1 in decimal, such as 0.3, 0.4 and 0.3, pass
// where their binary sum rounds above it.
const reserveSlack = 1e-9

// formatClasses writes classes as the classes key does: name:reserve, separated by commas,
// or none.
func formatClasses(classes []Class) string {
	if len(classes) == 0 {
		return "none"
	}
	var b strings.Builder
	for i, c := range classes {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(c.Name)
		b.WriteByte(':')
		b.WriteString(strconv.FormatFloat(c.Reserve, 'g', -1, 64))
	}
	return b.String()
}

// parseClasses reads the classes key's value: name:reserve pairs separated by commas, spaces
// around them ignored; none, or an empty value, is no classes. Config.validate checks the
// classes.
func parseClasses(text string) ([]Class, bool) {
	if t := strings.TrimSpace(text); t == "" || strings.EqualFold(t, "none") {
		return nil, true
	}
	var classes []Class
	for _, pair := range strings.Split(text, ",") {
		name, reserve, ok := strings.Cut(pair, ":")
		if !ok {
			return nil, false
		}
		r, err := strconv.ParseFloat(strings.TrimSpace(reserve), 64)
		if err != nil {
			return nil, false
		}
		classes = append(classes, Class{Name: strings.TrimSpace(name), Reserve: r})
	}
	return classes, true
}
