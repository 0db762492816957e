package adaptivelimit

import "context"

type classKey struct{}

// WithClass returns a copy of ctx that carries the priority class name: AcquireContext and Do
// take the slot of a call with that context for that class, and the HTTP and gRPC
// integrations send it on to the server.
func WithClass(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, classKey{}, name)
}

// ClassFromContext returns the priority class name that WithClass put in ctx, and whether
// there is one.
func ClassFromContext(ctx context.Context) (string, bool) {
	name, ok := ctx.Value(classKey{}).(string)
	return name, ok
}
