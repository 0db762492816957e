package grpclimit

import (
	"context"
	"maps"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/resilience4cata/adaptivelimit"
)

// DefaultClassMetadata is the metadata key in which the client interceptors send the
// priority class of a call's context (adaptivelimit.WithClass), unless WithClassMetadata
// names another.
const DefaultClassMetadata = "x-criticality"

// classOptions are the options of priority classes (adaptivelimit.Config.Classes) and of
// bypassed calls.
type classOptions struct {
	class    func(ctx context.Context, fullMethod string) string // servers: the call's class; nil for none
	metadata string                                              // clients: the key that carries the context's class; "" for none
	bypass   func(ctx context.Context, fullMethod string) bool   // nil for none
}

func defaultClassOptions() classOptions {
	return classOptions{metadata: DefaultClassMetadata, bypass: DefaultBypass}
}

// WithClassFrom makes the server interceptors take each call's slot for the priority class
// that f names (see adaptivelimit.Config.Classes): a name the limiter does not list, ""
// included, means its lowest class. The handler's context carries the class
// (adaptivelimit.WithClass), so that the client interceptors send it on to the next server.
// MetadataClass builds f from the call's metadata. f is called before the call takes a slot.
func WithClassFrom(f func(ctx context.Context, fullMethod string) string) Option {
	return func(o *options) { o.class = f }
}

// MetadataClass returns a classifier for WithClassFrom that reads the incoming metadata key
// (DefaultClassMetadata, as the client interceptors send it): a value that allowed lists
// selects the class it maps to, and any other value, or none, the lowest class. Only listed
// values count, matched exactly: a client cannot name a class, or a number, that the server
// did not list. allowed is copied.
func MetadataClass(key string, allowed map[string]string) func(ctx context.Context, fullMethod string) string {
	allowed = maps.Clone(allowed)
	return func(ctx context.Context, _ string) string {
		if v := metadata.ValueFromIncomingContext(ctx, key); len(v) > 0 {
			return allowed[v[0]]
		}
		return ""
	}
}

// WithClassMetadata names the metadata key in which the client interceptors send the
// priority class of each call's context: DefaultClassMetadata by default, "" for none. They
// take the call's slot of a classed limiter for that class either way.
func WithClassMetadata(key string) Option {
	return func(o *options) { o.metadata = key }
}

// classOf returns the class of a call to a server, and the context its handler gets.
func (c *classOptions) classOf(ctx context.Context, fullMethod string) (context.Context, string) {
	if c.class == nil {
		return ctx, ""
	}
	class := c.class(ctx, fullMethod)
	if class != "" {
		ctx = adaptivelimit.WithClass(ctx, class)
	}
	return ctx, class
}

// classOfStream is classOf for a stream, whose handler gets the context through ss.
func (c *classOptions) classOfStream(ss grpc.ServerStream, info *grpc.StreamServerInfo) (grpc.ServerStream, string) {
	if c.class == nil {
		return ss, ""
	}
	ctx, class := c.classOf(streamContext(ss), streamMethod(info))
	if class != "" {
		ss = &classStream{ServerStream: ss, ctx: ctx}
	}
	return ss, class
}

type classStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *classStream) Context() context.Context { return s.ctx }

// sendClass returns the class of a client's call, and the context to send it with: with
// the class in its outgoing metadata.
func (c *classOptions) sendClass(ctx context.Context) (context.Context, string) {
	class, ok := adaptivelimit.ClassFromContext(ctx)
	if ok && c.metadata != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, c.metadata, class)
	}
	return ctx, class
}
