package grpclimit

import (
	"context"
	"net/netip"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/resilience4cata/adaptivelimit/integration"
)

// DefaultClassMetadata is the metadata key in which the client interceptors send the
// priority class of a call's context (adaptivelimit.WithClass), unless WithClassMetadata
// names another: the header that httplimit and connectlimit send and read too, so that
// every wire agrees.
const DefaultClassMetadata = "x-criticality"

// A ClassMap maps the values of a call's metadata key to the limiter's priority classes,
// for WithClassFrom: MetadataClass builds it. Unlike a function, it tells the interceptor
// which classes it names, so that a class the limiter lacks is caught when the interceptor
// is built.
type ClassMap integration.ClassMap[call]

// call is what a server knows of a call, for a ClassMap or WithClassFrom's function.
type call struct {
	ctx        context.Context
	fullMethod string
}

// MetadataClass returns a ClassMap that reads the incoming metadata key (DefaultClassMetadata,
// as the client interceptors send it) from the callers that trusted reports true of: a value
// that allowed lists selects the class it maps to, and any other value, or none, the lowest
// class. Only listed values count, matched exactly: a client cannot name a class, or a
// number, that the server did not list. allowed is copied.
//
// Metadata is what the client says, and any client can say critical: a caller that trusted
// does not vouch for gets the lowest class, whatever it sends. trusted is given the call's
// context, and checks what a client cannot forge: its address (TrustNetworks), its verified
// TLS certificate (peer.FromContext's AuthInfo, a credentials.TLSInfo) or a credential that
// an authenticating interceptor before this one checked. It is called only for a call whose
// metadata names a listed value. The interceptor panics, when it is built, if trusted is
// nil: a server that trusts every caller says so with a function that returns true.
func MetadataClass(key string, allowed map[string]string, trusted func(ctx context.Context) bool) *ClassMap {
	values := func(c call) []string { return metadata.ValueFromIncomingContext(c.ctx, key) }
	var t func(call) bool
	if trusted != nil {
		t = func(c call) bool { return trusted(c.ctx) }
	}
	return (*ClassMap)(integration.NewClassMap(values, allowed, t))
}

// TrustNetworks returns a check of the callers whose class MetadataClass honours: those whose
// address, the call's peer (peer.FromContext), is in one of networks. The peer is the other
// end of the connection: behind a proxy or a load balancer it is theirs. An IPv4-mapped IPv6
// address is its IPv4 address, and a peer that is no IP (a Unix socket, an in-memory
// listener) is in none; no networks trusts no one. networks is copied. It panics if a
// network is not valid (the zero netip.Prefix).
func TrustNetworks(networks ...netip.Prefix) func(ctx context.Context) bool {
	in, err := integration.InNetworks(networks)
	if err != nil {
		panic("grpclimit: TrustNetworks: " + err.Error())
	}
	return func(ctx context.Context) bool {
		p, ok := peer.FromContext(ctx)
		return ok && p.Addr != nil && in(p.Addr.String())
	}
}

// A ClassSource names the priority class of a call to a server: a function of the call's
// context and full method, or a ClassMap.
type ClassSource interface {
	func(ctx context.Context, fullMethod string) string | *ClassMap
}

// WithClassFrom makes the server interceptors take each call's slot for the priority class
// that s names (see adaptivelimit.Config.Classes); "" means the lowest class, and so does a
// name the limiter lacks, which the limiter counts (Snapshot.UnknownClass). The handler's
// context carries the class (adaptivelimit.WithClass), so that the client interceptors send
// it on to the next server. s is called before the call takes a slot. A function decides
// whom to believe itself: a call's metadata is what its client says (see MetadataClass).
//
// The interceptor panics, when it is built, if s is nil, if a ClassMap's trusted is nil, or
// if it maps a value to a name that breaks the rule of class names (docs/integrations.md)
// or, on a limiter with classes, that is none of its classes.
func WithClassFrom[S ClassSource](s S) ServerOption {
	var f func(call) string
	var m *integration.ClassMap[call]
	switch s := any(s).(type) {
	case *ClassMap:
		m = (*integration.ClassMap[call])(s)
	case func(context.Context, string) string:
		if s != nil {
			f = func(c call) string { return s(c.ctx, c.fullMethod) }
		}
	}
	src := integration.NewClassSource(f, m)
	return serverOption(func(o *serverOptions) { o.class = src })
}

type classStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *classStream) Context() context.Context { return s.ctx }

// WithClassMetadata names the metadata key in which the client interceptors send the
// priority class of each call's context: DefaultClassMetadata by default, "" for none. The
// interceptors set the key to the context's class on every call, bypassed or not, and
// remove it from the outgoing metadata of a call whose context has none, so that a class
// that a proxy copied from its caller's metadata is never passed on as the proxy's own. A
// class that breaks the rule of class names is not sent, since gRPC would fail the call for
// it (a class no limiter could have: a classed limiter counts it in Snapshot.UnknownClass).
// The interceptors take the call's slot of a classed limiter for the context's class
// either way. With "", they leave the outgoing metadata as it is.
func WithClassMetadata(key string) ClientOption {
	return clientOption(func(o *clientOptions) { o.metadata = strings.ToLower(key) })
}

// sendClass returns the context to send a client's call with: its outgoing metadata holds
// the context's class under the class key, in place of any value it held, or nothing under
// that key where the context has no class that can be sent. A context whose metadata needs
// no change is ctx.
func (o *clientOptions) sendClass(ctx context.Context) context.Context {
	if o.metadata == "" {
		return ctx
	}
	class := integration.OutgoingClass(ctx)
	v := metadata.ValueFromOutgoingContext(ctx, o.metadata) // unlike FromOutgoingContext, no copy of it all
	switch {
	case len(v) == 0 && class == "", len(v) == 1 && v[0] == class && class != "":
		return ctx
	case len(v) == 0:
		return metadata.AppendToOutgoingContext(ctx, o.metadata, class)
	}
	md, _ := metadata.FromOutgoingContext(ctx) // a copy, with every key in lower case
	delete(md, o.metadata)
	if class != "" {
		md[o.metadata] = []string{class}
	}
	return metadata.NewOutgoingContext(ctx, md)
}
