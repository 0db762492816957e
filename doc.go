// Package adaptivelimit caps how many calls to a dependency run at once, and finds the cap
// by itself.
//
// Like a bulkhead, a [Limiter] admits a call only while fewer than its limit are running,
// and rejects the excess at once with [ErrLimitExceeded]; with [Config.MaxWait] set,
// [Limiter.AcquireContext] and [Do] wait up to that long instead, and a freed slot goes to a
// waiting caller before a new one. Unlike a bulkhead it moves the limit: after every window
// (at least [Config.Window] long, with at least [Config.MinWindowSamples] calls) it raises
// the limit while the dependency's latency holds and lowers it when latency rises
// ([Gradient2]), when calls are dropped ([AIMD]), or both ([Vegas], and [LossDelay], built for
// fleets, long incidents and latency shifts). The limit settles near the concurrency the
// dependency serves without queueing.
//
// With [Config.Classes], calls have priorities ([Class], [Limiter.AcquireClass], [WithClass]):
// every class takes its slot from the one limit, under a ceiling that falls while a class
// above is turned away, so that under overload the lowest class is shed first.
//
// Use it where the dependency's capacity is unknown or changes: it is shared, it autoscales,
// its load depends on other clients. Where the right number is known (a pool of 10
// connections), a fixed bulkhead is simpler; to cap calls per second, use a rate limiter.
//
// A [Registry] makes limiters by instance id, shares one among the call sites that give the
// same name, and merges each one's [Config] from defaults, named configurations, the call
// site's attributes and external keys read by [ParseProperties] (docs/configuration.md).
//
// The call path takes no lock and allocates nothing: a call takes its slot from the shared
// count with a compare-and-swap and frees it with an atomic add or, where processors contend
// for the count, with a compare-and-swap each on its processor's own cache. It reads the clock
// twice (the tick counter by default; once with AIMD) and counts its sample on its processor's
// own line; a rejection reads no clock. bench/README.md has the measurements.
package adaptivelimit
