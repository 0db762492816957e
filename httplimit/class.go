package httplimit

import (
	"maps"
	"net/http"
	"slices"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/integration"
)

// DefaultClassHeader is the header in which Transport sends the priority class of a
// request's context (adaptivelimit.WithClass), unless WithClassHeader names another: the
// key that grpclimit and connectlimit send and read too, so that every wire agrees.
const DefaultClassHeader = "x-criticality"

// A ClassMap maps the values of a request header to the limiter's priority classes, for
// WithClassFrom: HeaderClass builds it. Unlike a function, it tells Middleware which classes
// it names, so that a class the limiter lacks is caught when Middleware is built.
type ClassMap struct {
	header  string
	allowed map[string]string
}

// HeaderClass returns a ClassMap that reads the request's header: a value that allowed lists
// selects the class it maps to, and any other value, or none, the lowest class. Only listed
// values count, matched exactly: a client cannot name a class, or a number, that the server
// did not list. allowed is copied.
func HeaderClass(header string, allowed map[string]string) *ClassMap {
	return &ClassMap{header: http.CanonicalHeaderKey(header), allowed: maps.Clone(allowed)}
}

func (m *ClassMap) class(r *http.Request) string {
	if v := r.Header[m.header]; len(v) > 0 {
		return m.allowed[v[0]]
	}
	return ""
}

// A ClassSource names the priority class of a request to Middleware: a function of the
// request, or a ClassMap.
type ClassSource interface {
	func(*http.Request) string | *ClassMap
}

// WithClassFrom makes Middleware take each request's slot for the priority class that s
// names (see adaptivelimit.Config.Classes); "" means the lowest class, and so does a name
// the limiter lacks, which the limiter counts (Snapshot.UnknownClass). The handler's
// context carries the class (adaptivelimit.WithClass), so that a Transport sends it on to
// the next server. s is called before the request takes a slot.
//
// Middleware panics, when it is built, if s is nil, or if a ClassMap maps a value to a name
// that breaks the rule of class names (docs/integrations.md) or, on a limiter with classes,
// that is none of its classes.
func WithClassFrom[S ClassSource](s S) ServerOption {
	var src classSource
	switch s := any(s).(type) {
	case *ClassMap:
		if s != nil {
			src = classSource{f: s.class, names: slices.Sorted(maps.Values(s.allowed))}
		}
	case func(*http.Request) string:
		src = classSource{f: s}
	}
	return serverOption(func(o *serverOptions) { o.class, o.class.set = src, true })
}

// classSource is the class of Middleware's requests: f, if set, names it; names are those a
// ClassMap may name.
type classSource struct {
	f     func(*http.Request) string
	names []string
	set   bool // WithClassFrom was given
	slots integration.ClassAcquirer
}

// bind binds s to l, the limiter it takes slots of. It panics if WithClassFrom was given
// nil, or a ClassMap names a class that no request could be given.
func (s *classSource) bind(l *adaptivelimit.Limiter) {
	if s.set && s.f == nil {
		panic("httplimit: WithClassFrom(nil)")
	}
	s.slots = integration.NewClassAcquirer(l)
	if err := integration.CheckClassNames(l, s.names); err != nil {
		panic("httplimit: HeaderClass " + err.Error())
	}
}

// acquire takes a slot for a request to Middleware, for its class where WithClassFrom is
// set, waiting as the limiter's MaxWait allows within the request's context, and returns
// the request the handler gets: with the class in its context.
func (s *classSource) acquire(l *adaptivelimit.Limiter, r *http.Request) (adaptivelimit.Permit, *http.Request, error) {
	if s.f == nil {
		p, err := l.AcquireContext(r.Context())
		return p.Move(), r, err
	}
	ctx, p, err := s.slots.Acquire(r.Context(), s.f(r))
	if err == nil && ctx != r.Context() {
		r = r.WithContext(ctx)
	}
	return p.Move(), r, err
}

// WithClassHeader names the header in which Transport sends the priority class of each
// request's context (adaptivelimit.WithClass), for a server's HeaderClass to read:
// DefaultClassHeader by default, "" for none. A class that breaks the rule of class names is
// not sent (a class no limiter could have: a classed limiter counts it in
// Snapshot.UnknownClass). Transport takes the call's slot of a classed limiter for the
// context's class either way.
func WithClassHeader(header string) ClientOption {
	return clientOption(func(o *clientOptions) { o.header = http.CanonicalHeaderKey(header) })
}

// acquireClient takes a slot for a request to Transport, for its context's class, waiting
// as the limiter's MaxWait allows within the request's context, and returns the request to
// send: with the class in the header where one is named. The request is cloned, since a
// RoundTripper must not change it.
func (o *clientOptions) acquire(l *adaptivelimit.Limiter, req *http.Request) (adaptivelimit.Permit, *http.Request, error) {
	p, err := l.AcquireContext(req.Context())
	if err != nil || o.header == "" {
		return p.Move(), req, err
	}
	if class, ok := adaptivelimit.ClassFromContext(req.Context()); ok && integration.Sendable(class) {
		req = req.Clone(req.Context())
		if req.Header == nil {
			req.Header = make(http.Header)
		}
		req.Header[o.header] = []string{class}
	}
	return p.Move(), req, err
}
