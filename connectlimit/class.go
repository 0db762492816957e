package connectlimit

import (
	"context"
	"maps"
	"net/http"

	"connectrpc.com/connect"

	"github.com/resilience4cata/adaptivelimit"
)

// DefaultClassHeader is the header in which a client's interceptor sends the priority class
// of a call's context (adaptivelimit.WithClass), unless WithClassHeader names another. It is
// the metadata key that grpclimit sends and reads, so that connect and gRPC clients and
// servers agree.
const DefaultClassHeader = "X-Criticality"

// classOptions are the options of priority classes (adaptivelimit.Config.Classes) and of
// bypassed calls.
type classOptions struct {
	class  func(ctx context.Context, spec connect.Spec, header http.Header) string // handlers: the call's class; nil for none
	header string                                                                  // clients: the header that carries the context's class; "" for none
	bypass func(ctx context.Context, spec connect.Spec) bool                       // nil for none
}

func defaultClassOptions() classOptions {
	return classOptions{header: DefaultClassHeader, bypass: DefaultBypass}
}

// WithClassFrom makes a handler's interceptor take each call's slot for the priority class
// that f names from the call's spec and request header (see adaptivelimit.Config.Classes): a
// name the limiter does not list, "" included, means its lowest class. The handler's context
// carries the class (adaptivelimit.WithClass), so that a client's interceptor sends it on to
// the next server. HeaderClass builds f from a header. f is called before the call takes a
// slot.
func WithClassFrom(f func(ctx context.Context, spec connect.Spec, header http.Header) string) Option {
	return func(o *options) { o.class = f }
}

// HeaderClass returns a classifier for WithClassFrom that reads the request header (for
// instance DefaultClassHeader, as clients send it): a value that allowed lists selects the
// class it maps to, and any other value, or none, the lowest class. Only listed values count,
// matched exactly: a client cannot name a class, or a number, that the server did not list.
// allowed is copied.
func HeaderClass(header string, allowed map[string]string) func(ctx context.Context, spec connect.Spec, header http.Header) string {
	key, allowed := http.CanonicalHeaderKey(header), maps.Clone(allowed)
	return func(_ context.Context, _ connect.Spec, h http.Header) string {
		if v := h[key]; len(v) > 0 {
			return allowed[v[0]]
		}
		return ""
	}
}

// WithClassHeader names the header in which a client's interceptor sends the priority class
// of each call's context: DefaultClassHeader by default, "" for none. It takes the call's
// slot of a classed limiter for that class either way.
func WithClassHeader(header string) Option {
	return func(o *options) { o.header = http.CanonicalHeaderKey(header) }
}

// acquireHandler takes a slot for a call to a handler, for its class where WithClassFrom is
// set, and returns the context the handler gets: with the class in it.
func (i *interceptor) acquireHandler(ctx context.Context, spec connect.Spec, header http.Header) (context.Context, adaptivelimit.Permit, error) {
	if i.o.class == nil {
		p, err := i.l.Acquire()
		return ctx, p.Move(), err
	}
	class := i.o.class(ctx, spec, header)
	p, err := i.l.AcquireClass(class)
	if err == nil && class != "" {
		ctx = adaptivelimit.WithClass(ctx, class)
	}
	return ctx, p.Move(), err
}

// acquireClient takes a slot for a call that a client sends, for its context's class, and
// returns the class to send and whether there is one to send.
func (i *interceptor) acquireClient(ctx context.Context) (class string, send bool, p adaptivelimit.Permit, err error) {
	class, ok := adaptivelimit.ClassFromContext(ctx)
	if !ok {
		p, err = i.l.Acquire()
		return "", false, p.Move(), err
	}
	p, err = i.l.AcquireClass(class)
	return class, i.o.header != "", p.Move(), err
}
