package connectlimit

import (
	"context"
	"maps"
	"net/http"
	"net/netip"
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
	trusted func(ctx context.Context, peer connect.Peer, header http.Header) bool
}

// HeaderClass returns a ClassMap that reads the request header (DefaultClassHeader, as
// clients send it) from the callers that trusted reports true of: a value that allowed lists
// selects the class it maps to, and any other value, or none, the lowest class. Only listed
// values count, matched exactly: a client cannot name a class, or a number, that the server
// did not list. allowed is copied.
//
// A header is what the client says, and any client can say critical: a caller that trusted
// does not vouch for gets the lowest class, whatever it sends. trusted is given the call's
// context, peer and request header, and checks what a client cannot forge: its address
// (TrustNetworks), or a credential that an authenticating middleware before the handler
// checked and left in the context. It is called only for a call whose header names a listed
// value. NewInterceptor panics if trusted is nil: a server that trusts every caller says so
// with a function that returns true.
func HeaderClass(header string, allowed map[string]string, trusted func(ctx context.Context, peer connect.Peer, header http.Header) bool) *ClassMap {
	return &ClassMap{header: http.CanonicalHeaderKey(header), allowed: maps.Clone(allowed), trusted: trusted}
}

func (m *ClassMap) class(ctx context.Context, _ connect.Spec, peer connect.Peer, h http.Header) string {
	if v := h[m.header]; len(v) > 0 {
		if class := m.allowed[v[0]]; class != "" && m.trusted(ctx, peer, h) {
			return class
		}
	}
	return ""
}

// TrustNetworks returns a check of the callers whose class HeaderClass honours: those whose
// address, the call's connect.Peer.Addr, is in one of networks. The peer is the other end
// of the connection: behind a proxy or a load balancer it is theirs, and X-Forwarded-For,
// which the client may write, is not read. An IPv4-mapped IPv6 address is its IPv4 address;
// no networks trusts no one. networks is copied. It panics if a network is not valid (the
// zero netip.Prefix).
func TrustNetworks(networks ...netip.Prefix) func(ctx context.Context, peer connect.Peer, header http.Header) bool {
	in, err := integration.InNetworks(networks)
	if err != nil {
		panic("connectlimit: TrustNetworks: " + err.Error())
	}
	return func(_ context.Context, peer connect.Peer, _ http.Header) bool { return in(peer.Addr) }
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
// it on to the next server. s is called before the call takes a slot. A function decides
// whom to believe itself: a request's header is what its client says (see HeaderClass).
//
// NewInterceptor panics if s is nil, if a ClassMap's trusted is nil, or if it maps a value
// to a name that breaks the rule of class names (docs/integrations.md) or, on a limiter with
// classes, that is none of its classes.
func WithClassFrom[S ClassSource](s S) Option {
	var src classSource
	switch s := any(s).(type) {
	case *ClassMap:
		if s != nil {
			src = classSource{f: s.class, names: slices.Sorted(maps.Values(s.allowed)), untrusted: s.trusted == nil}
		}
	case func(context.Context, connect.Spec, http.Header) string:
		if s != nil {
			src = classSource{f: func(ctx context.Context, spec connect.Spec, _ connect.Peer, h http.Header) string {
				return s(ctx, spec, h)
			}}
		}
	}
	return func(o *options) { o.class, o.class.set = src, true }
}

// classSource is the class of a handler's calls: f, if set, names it; names are those a
// ClassMap may name.
type classSource struct {
	f         func(ctx context.Context, spec connect.Spec, peer connect.Peer, header http.Header) string
	names     []string
	untrusted bool // a ClassMap without its trusted
	set       bool // WithClassFrom was given
	slots     integration.ClassAcquirer
}

// bind binds s to l, the limiter it takes slots of. It panics if WithClassFrom was given
// nil, a ClassMap without its trusted, or one that names a class that no call could be
// given.
func (s *classSource) bind(l *adaptivelimit.Limiter) {
	if s.set && s.f == nil {
		panic("connectlimit: WithClassFrom(nil)")
	}
	if s.untrusted {
		panic("connectlimit: HeaderClass with a nil trusted")
	}
	s.slots = integration.NewClassAcquirer(l)
	if err := integration.CheckClassNames(l, s.names); err != nil {
		panic("connectlimit: HeaderClass " + err.Error())
	}
}

// WithClassHeader names the header in which a client's interceptor sends the priority class
// of each call's context: DefaultClassHeader by default, "" for none. The interceptor sets
// the header to the context's class on every call, bypassed or not, and removes it from the
// request of a call whose context has none, so that a class that a proxy copied from its
// caller's header is never passed on as the proxy's own. A class that breaks the rule of
// class names is not sent, since connect would fail the call for it (a class no limiter
// could have: a classed limiter counts it in Snapshot.UnknownClass). The interceptor takes
// the call's slot of a classed limiter for the context's class either way. With "", it
// leaves the request's header as it is.
func WithClassHeader(header string) Option {
	return func(o *options) { o.header = http.CanonicalHeaderKey(header) }
}

// acquireHandler takes a slot for a call to a handler, for its class where WithClassFrom is
// set, waiting as the limiter's MaxWait allows within the call's context, and returns the
// context the handler gets: with the class in it.
func (i *interceptor) acquireHandler(ctx context.Context, spec connect.Spec, peer connect.Peer, header http.Header) (context.Context, adaptivelimit.Permit, error) {
	if f := i.o.class.f; f != nil {
		return i.o.class.slots.Acquire(ctx, f(ctx, spec, peer, header))
	}
	p, err := i.l.AcquireContext(ctx)
	return ctx, p.Move(), err
}

// sendClass sets the class header of a unary call that a client sends, whose request
// header is h, to its context's class, or removes it where the context has none.
func (i *interceptor) sendClass(ctx context.Context, h http.Header) {
	if i.o.header != "" {
		setClass(h, i.o.header, integration.OutgoingClass(ctx))
	}
}

// setClass sets h's header key to class, or removes it where class is "".
func setClass(h http.Header, key, class string) {
	if class == "" {
		delete(h, key)
		return
	}
	h[key] = []string{class}
}

// classConn is a client's stream that sets its class header as its request is sent, with
// the first Send or CloseRequest: connect merges the caller's header (the request's, the
// context's CallInfo) into a stream's after the interceptors return it.
type classConn struct {
	connect.StreamingClientConn
	header, class string
	sent          bool // the write side (Send, RequestHeader, CloseRequest) is never called at once
}

// streamClass returns conn, as a classConn where the interceptor sends a class header.
func (i *interceptor) streamClass(ctx context.Context, conn connect.StreamingClientConn) connect.StreamingClientConn {
	if i.o.header == "" {
		return conn
	}
	return &classConn{StreamingClientConn: conn, header: i.o.header, class: integration.OutgoingClass(ctx)}
}

func (c *classConn) send() {
	if !c.sent {
		c.sent = true
		setClass(c.RequestHeader(), c.header, c.class)
	}
}

func (c *classConn) Send(m any) error {
	c.send()
	return c.StreamingClientConn.Send(m)
}

func (c *classConn) CloseRequest() error {
	c.send()
	return c.StreamingClientConn.CloseRequest()
}
