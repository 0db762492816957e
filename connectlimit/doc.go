// Package connectlimit puts an adaptive limit in front of connect-go handlers (for load
// shedding) and in front of a connect dependency (for clients), as a [connect.Interceptor].
//
// The interceptor that NewInterceptor returns acts by where it is installed. In a handler
// (connect.WithInterceptors as a HandlerOption), a call that finds the limit full is answered
// with connect.CodeResourceExhausted (see WithRejectionCode) and a Retry-After in the error's
// metadata (see WithRetryAfter), without calling the handler. In a client (as a
// ClientOption), such a call fails at once, without being sent, with a *connect.Error of
// the same code that matches adaptivelimit.ErrLimitExceeded. With a limiter that has a
// MaxWait, both wait for a slot first, no longer than the call's context lasts.
//
// Each admitted call ends with an [adaptivelimit.Outcome] that [DefaultOutcome] (see
// [WithOutcome]) decides from its error's code, as grpclimit's does; [DropOn] counts the same
// drops for the core's Config.DropOn. A stream holds its slot until it ends: the handler
// returns, or, in a client, the response ends, CloseResponse is called or the call's context
// is done.
//
// With a classed limiter (adaptivelimit.Config.Classes), a handler takes each call's slot
// for the class that [WithClassFrom] names, for instance from the x-criticality header that
// [HeaderClass] reads, and a client for its context's class (adaptivelimit.WithClass), which
// it sends in that header (see [WithClassHeader]). Calls that [WithBypass] matches, the gRPC
// health service's by default ([DefaultBypass]), are neither limited nor measured. The
// vocabulary, which httplimit and grpclimit share, is in docs/integrations.md.
//
// Who sets a class: the operator. HeaderClass honours the header only from the callers that
// its trusted check vouches for ([TrustNetworks], a credential that an authenticating
// middleware checked); any other caller is the lowest class, whatever it sends. A client
// sends the class of the call's context and nothing else: it replaces the header a request
// carries, and removes it where the context has no class, so that a service that passes its
// caller's header on does not pass its caller's claim on as its own.
//
// connect handlers are http.Handlers, so httplimit's Middleware sheds for them too; but
// connect clients read its 503 as CodeUnavailable, and only this package judges a
// call by its connect code.
package connectlimit
