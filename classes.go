package adaptivelimit

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/resilience4cata/adaptivelimit/internal/names"
)

// Class is a priority class of a limiter's calls. Config.Classes lists them highest first; the
// last is the lowest, which Acquire and any unknown class name mean. Under overload the lowest
// class is shed first (docs/configuration.md#priority-classes has the details):
//   - Every call takes its slot from the limit's one count, so at most the limit's calls hold
//     one, and only below its class's ceiling: the limit less what is held back for the classes
//     above. The highest class's ceiling is the limit.
//   - A class reserves R = floor(Reserve*A) slots of the algorithm's limit A, and has R - R/2
//     at once, after any history of calls: these never-lent parts of the classes above the
//     lowest come on top of A (up to MaxLimit), so that classes cost no goodput where A bounds it.
//   - The rest, and every slot no class reserves, is lent below; each call of the class turned
//     away (rejected, or waiting) takes one back from each class below, as its borrower finishes.
//   - Each window's close, due on time whether calls finish or not, lends again: where no class
//     above turned a call away it halves what is held back, else holds back at most the slots
//     they lacked, and at most six times that in the next window. So lending resumes within two
//     windows of the last call turned away.
type Class struct {
	Name    string
	Reserve float64 // the share of the limit reserved for the class, in [0, 1]; all together at most 1
}

// MaxClasses is the most classes a limiter may have.
const MaxClasses = 8

// ClassesCeiling is MaxClasses.
//
// Deprecated: use MaxClasses.
const ClassesCeiling = MaxClasses

// ClassSnapshot is one class's state at one moment.
type ClassSnapshot struct {
	Name     string
	Reserved int    // slots the class reserves under the limit now: its never-lent part and its lent part (see Class)
	InFlight int    // calls of the class holding a slot now (see Snapshot.Classes)
	Rejected uint64 // calls of the class rejected; in a dry run, calls that would have been
}

// classSet is a limiter's classes: their ceilings (class_ceiling.go) and calls by class
// (class_counts.go). The slots (slots.go) and the waiters by class (wait.go) are the limiter's.
type classSet struct {
	names   []string
	byBytes byBytes // the classes by their names' bytes (class_lookup.go)
	reserve []float64

	ceilings ceilings

	counts   []classStripe // by P, as the limiter's stripes
	overflow classStripe   // for the Ps beyond them, with atomic adds
	shown    [MaxClasses]monotone
	unknown  monotone // the most calls of an unknown class a snapshot has reported

	// Owned by the goroutine that sets the limit (New, then the window closer).
	estimate int64                    // the limit the algorithm set: see setLimit
	reserved [MaxClasses]atomic.Int64 // floor(Reserve*limit), by class, for Snapshot
	seen     [MaxClasses]uint64       // rejections by class as the last window closed
}

// newClassSet returns the state of classes, with counts by class for each of ss.
func newClassSet(classes []Class, ss *stripes) *classSet {
	n := len(classes)
	cs := &classSet{
		names:   make([]string, n),
		reserve: make([]float64, n),
		counts:  make([]classStripe, len(ss.s)),
	}
	for i, c := range classes {
		cs.names[i], cs.reserve[i] = c.Name, c.Reserve
	}
	cs.ceilings.classes = n
	for c := range n {
		cs.ceilings.class[c].c = c
		cs.ceilings.class[c].most.Store(math.MaxInt64)
	}
	cs.byBytes.build(cs.names, &cs.ceilings)
	cs.ceilings.class[n-1].shutBelow.Store(math.MaxUint32) // no class below the lowest: see ceilings
	return cs
}

// setLimit moves the reserves and ceilings.lent (to which windowClosed lowers takenBack) to
// estimate, the algorithm's limit, and returns limitAt: the never-lent parts on top (see Class).
func (cs *classSet) setLimit(estimate, most int64) (limit int64) {
	var kept, reserved int64
	for c := range cs.names {
		cs.ceilings.setNeverLent(c, kept)
		r := cs.reserveAt(c, estimate, reserved)
		cs.reserved[c].Store(r)
		reserved += r
		kept += r - r/2
	}
	limit = cs.limitAt(estimate, most)
	cs.estimate = estimate
	cs.ceilings.lent.Store(max(limit-kept, 0))
	return limit
}

// reserveAt returns class c's reserve under estimate, the classes above having reserved reserved.
func (cs *classSet) reserveAt(c int, estimate, reserved int64) int64 {
	return min(int64(math.Floor(cs.reserve[c]*float64(estimate))), estimate-reserved) // reserves of 1 may round above it
}

// limitAt returns the limit that setLimit sets for estimate and most (Config.MaxLimit).
func (cs *classSet) limitAt(estimate, most int64) int64 {
	var kept, reserved int64
	for c := range len(cs.names) - 1 {
		r := cs.reserveAt(c, estimate, reserved)
		reserved += r
		kept += r - r/2
	}
	return min(estimate+kept, max(most, estimate))
}

// snapshots fills s with each class's state (inFlight) and returns how many classes there
// are, and the calls rejected, which are the classes' (countRejected).
func (cs *classSet) snapshots(s *[MaxClasses]ClassSnapshot) (n int, rejected uint64) {
	var held [MaxClasses]int64
	cs.inFlight(&held)
	for i, name := range cs.names {
		r := cs.rejections(i)
		rejected += r
		s[i] = ClassSnapshot{
			Name:     name,
			Reserved: int(cs.reserved[i].Load()),
			InFlight: int(held[i]),
			Rejected: cs.shown[i].report(r),
		}
	}
	return len(cs.names), rejected
}

func (v *validator) classes(classes []Class) {
	fail := func(rule string) {
		v.fail("classes", formatClasses(classes), rule, ErrInvalidTuning)
	}
	if len(classes) > MaxClasses {
		fail(fmt.Sprintf("at most %d classes", MaxClasses))
		return
	}
	var sum float64
	for i, c := range classes {
		switch {
		case c.Name == "":
			fail(fmt.Sprintf("class %d has no name", i+1))
			return
		case !names.Class(c.Name):
			fail(fmt.Sprintf("class %q: a class name %s", c.Name, names.ClassRule))
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

// formatClasses writes classes as the classes key does, or "none".
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

// parseClasses reads the classes key's value (formatClasses); Config.validate checks it.
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

type classKey struct{}

// WithClass returns a copy of ctx that carries the priority class name: AcquireContext and Do
// take the slot of a call with that context for that class, and the HTTP and gRPC
// integrations send it on to the server.
func WithClass(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, classKey{}, name)
}

// ClassFromContext returns the priority class name that WithClass put in ctx, and whether
// there is one.
func ClassFromContext(ctx context.Context) (string, bool) {
	name, ok := ctx.Value(classKey{}).(string)
	return name, ok
}
