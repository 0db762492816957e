// Package hook carries what the integration package reads of a Limiter and the root package
// does not export: the root package sets the hooks when it is initialized, so that
// integration reads them without an import cycle, and users see no new name in the root
// package.
package hook

// Waits reports whether the callers of AcquireContext of l, a *adaptivelimit.Limiter, may
// wait for a slot: whether its Config.MaxWait is set.
var Waits func(l any) bool

// TimeCalls makes l, a *adaptivelimit.Limiter, time every call from now on, even where its
// algorithm reads no latency (AIMD): a server's limiter judges its callers' departures by
// how long they ran (adaptivelimit.Departed).
var TimeCalls func(l any)
