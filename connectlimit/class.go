package connectlimit

import (
	"context"
	"net/http"
	"net/netip"

	"connectrpc.com/connect"

	"github.com/resilience4cata/adaptivelimit/integration"
)

// DefaultClassHeader is the header in which a client's interceptor sends the priority class
// of a call's context (adaptivelimit.WithClass), unless WithClassHeader names another: the
// key that grpclimit and httplimit send and read too, so that every wire agrees.
const DefaultClassHeader = "x-criticality"

// classOptions are the options of priority classes (adaptivelimit.Config.Classes) and of
// bypassed calls.
type classOptions struct {
	class  integration.ClassSource[call]                     // handlers: the call's class
	header string                                            // clients: the header that carries the context's class; "" for none
	bypass func(ctx context.Context, spec connect.Spec) bool // calls that take no slot
}

func defaultClassOptions() classOptions {
	return classOptions{header: http.CanonicalHeaderKey(DefaultClassHeader), bypass: DefaultBypass}
}

// A ClassMap maps the values of a request header to the limiter's priority classes, for
// WithClassFrom: HeaderClass builds it. Unlike a function, it tells NewInterceptor which
// classes it names, so that a class the limiter lacks is caught when it is built.
type ClassMap integration.ClassMap[call]

// call is what a handler's interceptor knows of a call, for a ClassMap or WithClassFrom's
// function.
type call struct {
	ctx    context.Context
	spec   connect.Spec
	peer   connect.Peer
	header http.Header
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
	header = http.CanonicalHeaderKey(header)
	values := func(c call) []string { return c.header[header] }
	var t func(call) bool
	if trusted != nil {
		t = func(c call) bool { return trusted(c.ctx, c.peer, c.header) }
	}
	return (*ClassMap)(integration.NewClassMap(values, allowed, t))
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
	var f func(call) string
	var m *integration.ClassMap[call]
	switch s := any(s).(type) {
	case *ClassMap:
		m = (*integration.ClassMap[call])(s)
	case func(context.Context, connect.Spec, http.Header) string:
		if s != nil {
			f = func(c call) string { return s(c.ctx, c.spec, c.header) }
		}
	}
	src := integration.NewClassSource(f, m)
	return func(o *options) { o.class = src }
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
