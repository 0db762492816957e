// Package grpclimit puts an adaptive limit in front of gRPC services (server interceptors,
// for load shedding) and in front of a gRPC dependency (client interceptors).
//
// A server interceptor answers a call that finds the limit full with codes.ResourceExhausted
// (see WithRejectionCode) and the retry pushback hint grpc-retry-pushback-ms in the trailers
// (see WithPushback), without calling the handler. A client interceptor fails such a call
// with an error whose status has the same code and that matches
// adaptivelimit.ErrLimitExceeded, without sending it. With a limiter that has a MaxWait, both
// wait for a slot first, no longer than the call's context lasts.
//
// Each call that is admitted ends with an [adaptivelimit.Outcome] that [DefaultOutcome] (see
// [WithOutcome]) decides from its status, as connectlimit's does; [DropOn] counts the same
// drops for the core's Config.DropOn. A stream holds its slot until it ends.
//
// A [ServerOption] configures the server interceptors, a [ClientOption] the client ones, and
// an [Option] all four, so that an option given to the side it does not apply to does not
// compile. With a limiter that has priority classes, the client interceptors send the
// context's class in the x-criticality metadata (see [WithClassMetadata]), and
// [WithClassFrom] with [MetadataClass] gives a server's calls their class. [WithBypass] keeps
// calls out of the limit: by default, those of the gRPC health service ([DefaultBypass]). The
// vocabulary, which httplimit and connectlimit share, is in docs/integrations.md.
//
// Who sets a class: the operator. MetadataClass honours the metadata only from the callers
// that its trusted check vouches for ([TrustNetworks], a verified client certificate in the
// peer's AuthInfo, an authenticated caller); any other caller is the lowest class, whatever
// it sends. The client interceptors send the class of the call's context and nothing else:
// they replace the key in the outgoing metadata, and remove it where the context has no
// class, so that a service that passes its caller's metadata on does not pass its caller's
// claim on as its own.
package grpclimit
