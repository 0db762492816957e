package httplimit

import (
	"net/http"
	"net/netip"

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
type ClassMap integration.ClassMap[*http.Request]

// HeaderClass returns a ClassMap that reads the request's header from the callers that
// trusted reports true of: a value that allowed lists selects the class it maps to, and any
// other value, or none, the lowest class. Only listed values count, matched exactly: a
// client cannot name a class, or a number, that the server did not list. allowed is copied.
//
// A header is what the client says, and any client can say critical: a caller that trusted
// does not vouch for gets the lowest class, whatever it sends. trusted checks what a client
// cannot forge, such as its network (TrustNetworks), its verified TLS certificate
// (r.TLS.VerifiedChains) or a credential that an authenticating middleware before this one
// checked; it is called only for a request whose header names a listed value. Middleware
// panics, when it is built, if trusted is nil: a server that trusts every caller says so
// with a function that returns true.
func HeaderClass(header string, allowed map[string]string, trusted func(*http.Request) bool) *ClassMap {
	header = http.CanonicalHeaderKey(header)
	values := func(r *http.Request) []string { return r.Header[header] }
	return (*ClassMap)(integration.NewClassMap(values, allowed, trusted))
}

// TrustNetworks returns a check of the callers whose class HeaderClass honours: those whose
// address, the request's RemoteAddr, is in one of networks. RemoteAddr is the peer of the
// connection: behind a proxy or a load balancer it is theirs, and X-Forwarded-For, which
// the client may write, is not read. An IPv4-mapped IPv6 address is its IPv4 address; no
// networks trusts no one. networks is copied. It panics if a network is not valid (the zero
// netip.Prefix).
func TrustNetworks(networks ...netip.Prefix) func(*http.Request) bool {
	in, err := integration.InNetworks(networks)
	if err != nil {
		panic("httplimit: TrustNetworks: " + err.Error())
	}
	return func(r *http.Request) bool { return in(r.RemoteAddr) }
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
// the next server. s is called before the request takes a slot. A function decides whom to
// believe itself: a request's header is what its client says (see HeaderClass).
//
// Middleware panics, when it is built, if s is nil, if a ClassMap's trusted is nil, or if
// it maps a value to a name that breaks the rule of class names (docs/integrations.md) or,
// on a limiter with classes, that is none of its classes.
func WithClassFrom[S ClassSource](s S) ServerOption {
	var f func(*http.Request) string
	var m *integration.ClassMap[*http.Request]
	switch s := any(s).(type) {
	case *ClassMap:
		m = (*integration.ClassMap[*http.Request])(s)
	case func(*http.Request) string:
		f = s
	}
	src := integration.NewClassSource(f, m)
	return serverOption(func(o *serverOptions) { o.class = src })
}

// acquire takes a slot for a request to Middleware, for its class where WithClassFrom is
// set (integration.ClassSource.Acquire), and returns the request the handler gets: with the
// class in its context.
func (o *serverOptions) acquire(r *http.Request) (adaptivelimit.Permit, *http.Request, error) {
	ctx, p, err := o.class.Acquire(r.Context(), r)
	if err == nil && ctx != r.Context() {
		r = r.WithContext(ctx)
	}
	return p.Move(), r, err
}

// WithClassHeader names the header in which Transport sends the priority class of each
// request's context (adaptivelimit.WithClass), for a server's HeaderClass to read:
// DefaultClassHeader by default, "" for none. Transport sets the header to the context's
// class on every request, bypassed or not, and removes it from a request whose context has
// none, so that a class a proxy's caller wrote in it is never passed on as the proxy's own.
// A class that breaks the rule of class names is not sent (a class no limiter could have: a
// classed limiter counts it in Snapshot.UnknownClass). Transport takes the call's slot of a
// classed limiter for the context's class either way. With "", Transport leaves the
// request's headers as they are.
func WithClassHeader(header string) ClientOption {
	return clientOption(func(o *clientOptions) { o.header = http.CanonicalHeaderKey(header) })
}

// acquire takes a slot for a request to Transport, for its context's class, waiting as the
// limiter's MaxWait allows within the request's context, and returns the request to send
// (see withClass).
func (o *clientOptions) acquire(l *adaptivelimit.Limiter, req *http.Request) (adaptivelimit.Permit, *http.Request, error) {
	p, err := l.AcquireContext(req.Context())
	if err != nil {
		return p.Move(), req, err
	}
	return p.Move(), o.withClass(req), nil
}

// withClass returns req with the class header set to its context's class, or removed where
// the context has none. A request that needs a change is cloned, since a RoundTripper must
// not change it; one that needs none is req.
func (o *clientOptions) withClass(req *http.Request) *http.Request {
	if o.header == "" {
		return req
	}
	class := integration.OutgoingClass(req.Context())
	v, ok := req.Header[o.header]
	if class == "" {
		if !ok {
			return req
		}
		req = req.Clone(req.Context())
		delete(req.Header, o.header)
		return req
	}
	if len(v) == 1 && v[0] == class {
		return req
	}
	req = req.Clone(req.Context())
	if req.Header == nil {
		req.Header = make(http.Header)
	}
	req.Header[o.header] = []string{class}
	return req
}
