package grpclimit

import (
	"context"
	"maps"
	"slices"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/resilience4cata/adaptivelimit"
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
type ClassMap struct {
	key     string
	allowed map[string]string
}

// MetadataClass returns a ClassMap that reads the incoming metadata key (DefaultClassMetadata,
// as the client interceptors send it): a value that allowed lists selects the class it maps
// to, and any other value, or none, the lowest class. Only listed values count, matched
// exactly: a client cannot name a class, or a number, that the server did not list. allowed
// is copied.
func MetadataClass(key string, allowed map[string]string) *ClassMap {
	return &ClassMap{key: key, allowed: maps.Clone(allowed)}
}

func (m *ClassMap) class(ctx context.Context, _ string) string {
	if v := metadata.ValueFromIncomingContext(ctx, m.key); len(v) > 0 {
		return m.allowed[v[0]]
	}
	return ""
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
// it on to the next server. s is called before the call takes a slot.
//
// The interceptor panics, when it is built, if s is nil, or if a ClassMap maps a value to a
// name that breaks the rule of class names (docs/integrations.md) or, on a limiter with
// classes, that is none of its classes.
func WithClassFrom[S ClassSource](s S) ServerOption {
	var src classSource
	switch s := any(s).(type) {
	case *ClassMap:
		if s != nil {
			src = classSource{f: s.class, names: slices.Sorted(maps.Values(s.allowed))}
		}
	case func(context.Context, string) string:
		src = classSource{f: s}
	}
	return serverOption(func(o *serverOptions) { o.class, o.class.set = src, true })
}

// classSource is the class of a server's calls: f, if set, names it; names are those a
// ClassMap may name.
type classSource struct {
	f     func(ctx context.Context, fullMethod string) string
	names []string
	set   bool // WithClassFrom was given
	slots integration.ClassAcquirer
}

// bind binds s to l, the limiter it takes slots of. It panics if WithClassFrom was given
// nil, or a ClassMap names a class that no call could be given.
func (s *classSource) bind(l *adaptivelimit.Limiter) {
	if s.set && s.f == nil {
		panic("grpclimit: WithClassFrom(nil)")
	}
	s.slots = integration.NewClassAcquirer(l)
	if err := integration.CheckClassNames(l, s.names); err != nil {
		panic("grpclimit: MetadataClass " + err.Error())
	}
}

// acquire takes a slot for a call to a server, for its class where WithClassFrom names
// one, waiting as the limiter's MaxWait allows within ctx, and returns the context its
// handler gets: with the class in it.
func (s *classSource) acquire(l *adaptivelimit.Limiter, ctx context.Context, fullMethod string) (context.Context, adaptivelimit.Permit, error) {
	if s.f == nil {
		p, err := l.AcquireContext(ctx)
		return ctx, p.Move(), err
	}
	return s.slots.Acquire(ctx, s.f(ctx, fullMethod))
}

type classStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *classStream) Context() context.Context { return s.ctx }

// WithClassMetadata names the metadata key in which the client interceptors send the
// priority class of each call's context: DefaultClassMetadata by default, "" for none. A
// class that breaks the rule of class names is not sent, since gRPC would fail the call for
// it (a class no limiter could have: a classed limiter counts it in Snapshot.UnknownClass).
// The interceptors take the call's slot of a classed limiter for the context's class
// either way.
func WithClassMetadata(key string) ClientOption {
	return clientOption(func(o *clientOptions) { o.metadata = key })
}

// sendClass returns the context to send a client's call with: with the context's class in
// its outgoing metadata, where there is one that can be sent.
func (o *clientOptions) sendClass(ctx context.Context) context.Context {
	if o.metadata == "" {
		return ctx
	}
	if class, ok := adaptivelimit.ClassFromContext(ctx); ok && integration.Sendable(class) {
		ctx = metadata.AppendToOutgoingContext(ctx, o.metadata, class)
	}
	return ctx
}
