package connectlimit

import (
	"context"
	"maps"
	"net/http"
	"slices"

	"connectrpc.com/connect"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/integration"
)

// DefaultClassHeader is the header in which a client's interceptor sends the priority class
// of a call's context (adaptivelimit.WithClass), unless WithClassHeader names another: the
// key that grpclimit and httplimit send and read too, so that every wire agrees.
const DefaultClassHeader = "x-criticality"

// classOptions are the options of priority classes (adaptivelimit.Config.Classes) and of
// bypassed calls.
type classOptions struct {
	class  classSource                                       // handlers: the call's class
	header string                                            // clients: the header that carries the context's class; "" for none
	bypass func(ctx context.Context, spec connect.Spec) bool // calls that take no slot
}

func defaultClassOptions() classOptions {
	return classOptions{header: http.CanonicalHeaderKey(DefaultClassHeader), bypass: DefaultBypass}
}

// A ClassMap maps the values of a request header to the limiter's priority classes, for
// WithClassFrom: HeaderClass builds it. Unlike a function, it tells NewInterceptor which
// classes it names, so that a class the limiter lacks is caught when it is built.
type ClassMap struct {
	header  string
	allowed map[string]string
}

// HeaderClass returns a ClassMap that reads the request header (DefaultClassHeader, as
// clients send it): a value that allowed lists selects the class it maps to, and any other
// value, or none, the lowest class. Only listed values count, matched exactly: a client
// cannot name a class, or a number, that the server did not list. allowed is copied.
func HeaderClass(header string, allowed map[string]string) *ClassMap {
	return &ClassMap{header: http.CanonicalHeaderKey(header), allowed: maps.Clone(allowed)}
}

func (m *ClassMap) class(_ context.Context, _ connect.Spec, h http.Header) string {
	if v := h[m.header]; len(v) > 0 {
		return m.allowed[v[0]]
	}
	return ""
}

// A ClassSource names the priority class of a call to a handler: a function of the call's
// context, spec and request header, or a ClassMap.
type ClassSource interface {
	func(ctx context.Context, spec connect.Spec, header http.Header) string | *ClassMap
}

// WithClassFrom makes a handler's interceptor take each call's slot for the priority class
// that s names (see adaptivelimit.Config.Classes); "" means the lowest class, and so does a
// name the limiter lacks, which the limiter counts (Snapshot.UnknownClass). The handler's
// context carries the class (adaptivelimit.WithClass), so that a client's interceptor sends
// it on to the next server. s is called before the call takes a slot.
//
// NewInterceptor panics if s is nil, or if a ClassMap maps a value to a name that breaks the
// rule of class names (docs/integrations.md) or, on a limiter with classes, that is none of
// its classes.
func WithClassFrom[S ClassSource](s S) Option {
	var src classSource
	switch s := any(s).(type) {
	case *ClassMap:
		if s != nil {
			src = classSource{f: s.class, names: slices.Sorted(maps.Values(s.allowed))}
		}
	case func(context.Context, connect.Spec, http.Header) string:
		src = classSource{f: s}
	}
	return func(o *options) { o.class, o.class.set = src, true }
}

// classSource is the class of a handler's calls: f, if set, names it; names are those a
// ClassMap may name.
type classSource struct {
	f     func(ctx context.Context, spec connect.Spec, header http.Header) string
	names []string
	set   bool // WithClassFrom was given
	slots integration.ClassAcquirer
}

// bind binds s to l, the limiter it takes slots of. It panics if WithClassFrom was given
// nil, or a ClassMap names a class that no call could be given.
func (s *classSource) bind(l *adaptivelimit.Limiter) {
	if s.set && s.f == nil {
		panic("connectlimit: WithClassFrom(nil)")
	}
	s.slots = integration.NewClassAcquirer(l)
	if err := integration.CheckClassNames(l, s.names); err != nil {
		panic("connectlimit: HeaderClass " + err.Error())
	}
}

// WithClassHeader names the header in which a client's interceptor sends the priority class
// of each call's context: DefaultClassHeader by default, "" for none. A class that breaks
// the rule of class names is not sent, since connect would fail the call for it (a class no
// limiter could have: a classed limiter counts it in Snapshot.UnknownClass). The interceptor
// takes the call's slot of a classed limiter for the context's class either way.
func WithClassHeader(header string) Option {
	return func(o *options) { o.header = http.CanonicalHeaderKey(header) }
}

// acquireHandler takes a slot for a call to a handler, for its class where WithClassFrom is
// set, waiting as the limiter's MaxWait allows within the call's context, and returns the
// context the handler gets: with the class in it.
func (i *interceptor) acquireHandler(ctx context.Context, spec connect.Spec, header http.Header) (context.Context, adaptivelimit.Permit, error) {
	if f := i.o.class.f; f != nil {
		return i.o.class.slots.Acquire(ctx, f(ctx, spec, header))
	}
	p, err := i.l.AcquireContext(ctx)
	return ctx, p.Move(), err
}

// acquireClient takes a slot for a call that a client sends, for its context's class,
// waiting as the limiter's MaxWait allows within the call's context, and returns the class
// to send, "" for none.
func (i *interceptor) acquireClient(ctx context.Context) (send string, p adaptivelimit.Permit, err error) {
	p, err = i.l.AcquireContext(ctx)
	if err != nil || i.o.header == "" {
		return "", p.Move(), err
	}
	if class, ok := adaptivelimit.ClassFromContext(ctx); ok && integration.Sendable(class) {
		send = class
	}
	return send, p.Move(), nil
}
