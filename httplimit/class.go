package httplimit

import (
	"maps"
	"net/http"

	"github.com/resilience4cata/adaptivelimit"
)

// classOptions are the options of priority classes (adaptivelimit.Config.Classes) and of
// bypassed requests.
type classOptions struct {
	classify func(*http.Request) string // Middleware: the request's class; nil for none
	header   string                     // Transport: the header that carries the context's class; "" for none
	bypass   func(*http.Request) bool   // nil for none
}

// WithClassifier makes Middleware take each request's slot for the priority class that f
// names (see adaptivelimit.Config.Classes): a name the limiter does not list, "" included,
// means its lowest class. The handler's context carries the class (adaptivelimit.WithClass),
// so that a Transport with WithClassHeader sends it on to the next server. HeaderClass
// builds f from a request header. f is called before the request takes a slot.
func WithClassifier(f func(*http.Request) string) Option {
	return func(o *options) { o.classify = f }
}

// HeaderClass returns a classifier for WithClassifier that reads the request's header: a
// value that allowed lists selects the class it maps to, and any other value, or none, the
// lowest class. Only listed values count, matched exactly: a client cannot name a class, or
// a number, that the server did not list. allowed is copied.
func HeaderClass(header string, allowed map[string]string) func(*http.Request) string {
	key, allowed := http.CanonicalHeaderKey(header), maps.Clone(allowed)
	return func(r *http.Request) string {
		if v := r.Header[key]; len(v) > 0 {
			return allowed[v[0]]
		}
		return ""
	}
}

// WithClassHeader makes Transport send the priority class of each request's context
// (adaptivelimit.WithClass) in header, for a server's HeaderClass to read, and take the
// call's slot of a classed limiter for that class. A request whose context has no class is
// sent as it is.
func WithClassHeader(header string) Option {
	return func(o *options) { o.header = http.CanonicalHeaderKey(header) }
}

// acquire takes a slot for a request to Middleware, for its class where a classifier is set,
// and returns the request the handler gets: with the class in its context.
func (c *classOptions) acquire(l *adaptivelimit.Limiter, r *http.Request) (adaptivelimit.Permit, *http.Request, error) {
	if c.classify == nil {
		p, err := l.Acquire()
		return p.Move(), r, err
	}
	class := c.classify(r)
	p, err := l.AcquireClass(class)
	if err == nil && class != "" {
		r = r.WithContext(adaptivelimit.WithClass(r.Context(), class))
	}
	return p.Move(), r, err
}

// acquireClient takes a slot for a request to Transport, for its context's class, and
// returns the request to send: with the class in the header where WithClassHeader names
// one. The request is cloned, since a RoundTripper must not change it.
func (c *classOptions) acquireClient(l *adaptivelimit.Limiter, req *http.Request) (adaptivelimit.Permit, *http.Request, error) {
	class, ok := adaptivelimit.ClassFromContext(req.Context())
	if !ok {
		p, err := l.Acquire()
		return p.Move(), req, err
	}
	p, err := l.AcquireClass(class)
	if err == nil && c.header != "" {
		req = req.Clone(req.Context())
		if req.Header == nil {
			req.Header = make(http.Header)
		}
		req.Header[c.header] = []string{class}
	}
	return p.Move(), req, err
}
