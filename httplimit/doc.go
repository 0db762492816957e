// Package httplimit puts an adaptive limit in front of HTTP handlers (load shedding) and
// in front of an HTTP dependency (a client's transport).
//
// [Middleware] rejects the requests that find the limit full with 503 Service Unavailable
// and a Retry-After header, without calling the handler. [Transport] rejects the calls that
// find it full with an error that matches [adaptivelimit.ErrLimitExceeded], without touching
// the network.
//
// Each call that is admitted ends with an [adaptivelimit.Outcome]: a latency sample of a
// healthy call, a drop (the server is overloaded), or nothing (the call says nothing about
// load). The classifiers decide it from the status code or the error; options replace them.
//
// With a limiter that has priority classes, [WithClassifier] (and [HeaderClass]) gives each
// request its class, and [WithClassHeader] sends the context's class on; [WithBypass] keeps
// health checks and the like out of the limit.
package httplimit
