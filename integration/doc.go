// Package integration is for authors of integrations: the plumbing that this repository's
// integrations (grpclimit, connectlimit, promlimit, otellimit) share across their modules.
// Applications do not need it; they use the root package and an integration.
//
// A StreamPermit holds a streaming call's slot until the stream ends, whichever goroutine
// sees the end first. Snapshots reads several limiters at once, as a metrics exporter does
// at each collection. A ClassAcquirer takes a server's slots for the calls' classes, waiting
// where the limiter may; Sendable tells whether a client may send a context's class, by the
// rule of class names, and OutgoingClass which class it sends; InNetworks checks a caller's
// address for a server that trusts the class only from some networks; RetryHint writes a
// rejection's retry hint, clamped. A ClassSource names a server's calls' classes, of a
// function or of a ClassMap, for the servers of httplimit, grpclimit and connectlimit alike;
// DropCode and CodeOutcome read gRPC's status codes, which connect's equal.
package integration
