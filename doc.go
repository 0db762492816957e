// Package adaptivelimit caps how many calls to a dependency run at once, and finds the cap
// by itself.
//
// Like a bulkhead, a [Limiter] admits a call only while fewer than its limit are running,
// and rejects the excess at once with [ErrLimitExceeded] instead of letting it queue. Unlike
// a bulkhead it moves the limit: after every window (at least [Config.Window] long, with at
// least [Config.MinWindowSamples] calls) it raises the limit while the dependency's latency
// holds and lowers it when latency rises ([Gradient2]), when calls are dropped ([AIMD]), or
// both ([Vegas], and [LossDelay], built to hold in fleets, long incidents and latency
// shifts). The limit settles near the concurrency the dependency serves without queueing.
//
// By default a full limiter rejects at once. With [Config.MaxWait] set,
// [Limiter.AcquireContext] and [Do] wait for a slot instead, for at most that long, and a
// freed slot goes to a waiting caller before a new one.
//
// With [Config.Classes], calls have priorities: every class takes its slot from the one
// limit, under a ceiling that holds back part of the reserves above it and falls while a
// class above is turned away, so that under overload the lowest class is shed first
// ([Limiter.AcquireClass], [WithClass], [Class]).
//
// Use it where the dependency's capacity is unknown or changes: it is shared, it autoscales,
// its load depends on other clients. Where the right number is known (a pool of 10
// connections), a fixed bulkhead is simpler; to cap calls per second, use a rate limiter.
//
// A [Registry] makes limiters by instance id, shares one among the call sites that give the
// same name, and merges each one's [Config] from defaults, named configurations, the call
// site's attributes and external keys read by [ParseProperties] (docs/configuration.md).
//
// The call path takes no lock and allocates nothing. An admitted call takes its slot with a
// compare-and-swap on the shared count and frees it with an atomic add; where calls on
// several processors contend for the count within a window, each processor keeps a cache of
// slots on its own cache line, and a call takes and frees its slot there with a
// compare-and-swap each. It reads the clock twice (the processor's tick counter by default;
// once with AIMD, which uses no latency) and counts its sample in the processor's own
// counters. A rejection reads no clock. bench/README.md has the measurements.
package adaptivelimit
