package integration

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/resilience4cata/adaptivelimit"
)

// A ClassMap maps the values that a server's callers send under a key (a header, a gRPC
// metadata key) to the limiter's priority classes. Call is what a server's integration knows
// of a call: an *http.Request, or a struct of the call's context and the rest. httplimit's,
// grpclimit's and connectlimit's ClassMaps are ClassMaps of their calls.
type ClassMap[Call any] struct {
	values  func(Call) []string
	allowed map[string]string
	trusted func(Call) bool
}

// NewClassMap returns the ClassMap that gives a call the class that allowed maps the first
// of its values to, where trusted reports true of the call, and "" (the lowest class)
// otherwise. Only listed values count, matched exactly, and trusted is called only for a
// call whose value is listed. allowed is copied. A nil trusted makes Bind fail.
func NewClassMap[Call any](values func(Call) []string, allowed map[string]string, trusted func(Call) bool) *ClassMap[Call] {
	return &ClassMap[Call]{values: values, allowed: maps.Clone(allowed), trusted: trusted}
}

func (m *ClassMap[Call]) class(c Call) string {
	if v := m.values(c); len(v) > 0 {
		if class := m.allowed[v[0]]; class != "" && m.trusted(c) {
			return class
		}
	}
	return ""
}

// A ClassSource names the priority class of each call to a server, and takes the call's
// slot for it: an integration's WithClassFrom builds it, of a function or of a ClassMap. The
// zero ClassSource names none: each call takes the slot of its context's class.
type ClassSource[Call any] struct {
	f         func(Call) string
	names     []string // the classes a ClassMap may name
	untrusted bool     // a ClassMap without its trusted
	set       bool     // a function or a ClassMap was given
	slots     ClassAcquirer
}

// NewClassSource returns the ClassSource of f, or of m where f is nil. Where both are nil
// (WithClassFrom was given nil), Bind fails.
func NewClassSource[Call any](f func(Call) string, m *ClassMap[Call]) ClassSource[Call] {
	if f == nil && m != nil {
		return ClassSource[Call]{f: m.class, names: slices.Sorted(maps.Values(m.allowed)), untrusted: m.trusted == nil, set: true}
	}
	return ClassSource[Call]{f: f, set: true}
}

// Bind binds s to l, the limiter whose slots Acquire takes (see NewClassAcquirer). It
// returns the error that a server's integration panics with when it is built: s was given a
// nil function or ClassMap, a ClassMap without its trusted, or one that names a class that
// no call could be given (CheckClassNames). mapName, the function that builds the
// integration's ClassMaps, opens the errors of a ClassMap.
func (s *ClassSource[Call]) Bind(l *adaptivelimit.Limiter, mapName string) error {
	if s.set && s.f == nil {
		return errors.New("WithClassFrom(nil)")
	}
	if s.untrusted {
		return errors.New(mapName + " with a nil trusted")
	}
	s.slots = NewClassAcquirer(l)
	if err := CheckClassNames(l, s.names); err != nil {
		return errors.New(mapName + " " + err.Error())
	}
	return nil
}

// Acquire takes a slot for c, a call whose context is ctx, for the class that s names
// (ClassAcquirer.Acquire), and returns the context its handler gets: with the class in it.
func (s *ClassSource[Call]) Acquire(ctx context.Context, c Call) (context.Context, adaptivelimit.Permit, error) {
	if s.f == nil {
		return s.slots.Acquire(ctx, "")
	}
	return s.slots.Acquire(ctx, s.f(c))
}
