// Package httplimit puts an adaptive limit in front of HTTP handlers (load shedding) and
// in front of an HTTP dependency (a client's transport).
//
// [Middleware] rejects the requests that find the limit full with 503 Service Unavailable
// and a Retry-After header, without calling the handler. [Transport] rejects the calls that
// find it full with an error that matches [adaptivelimit.ErrLimitExceeded], without touching
// the network. With a limiter that has a MaxWait, both wait for a slot first, no longer than
// the request's context lasts.
//
// Each call that is admitted ends with an [adaptivelimit.Outcome]: a latency sample of a
// healthy call, a drop (the server is overloaded), or nothing (the call says nothing about
// load). [DefaultServerOutcome] and [DefaultClientOutcome] judge a status alike, and
// [WithServerOutcome] and [WithClientOutcome] replace them.
//
// A [ServerOption] configures Middleware, a [ClientOption] Transport, and an [Option] both,
// so that an option given to the side it does not apply to does not compile. With a limiter
// that has priority classes, [WithClassFrom] with [HeaderClass] gives each request its
// class, and Transport sends the context's class in x-criticality (see [WithClassHeader]);
// [WithBypass] keeps health checks and the like out of the limit, by default the gRPC health
// service's ([DefaultBypass]). The vocabulary, which grpclimit and connectlimit share, is in
// docs/integrations.md.
//
// Who sets a class: the operator. HeaderClass honours the header only from the callers that
// its trusted check vouches for ([TrustNetworks], a verified client certificate, an
// authenticated caller); any other caller is the lowest class, whatever it sends. Transport
// sends the class of the request's context and nothing else: it replaces the header a
// request carries, and removes it where the context has no class, so that a proxy does not
// pass its caller's claim on as its own.
package httplimit
