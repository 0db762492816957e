// Package integration is for authors of integrations: the plumbing that this repository's
// integrations (grpclimit, connectlimit, promlimit, otellimit) share across their modules.
// Applications do not need it; they use the root package and an integration.
//
// A StreamPermit holds a streaming call's slot until the stream ends, whichever goroutine
// sees the end first. Snapshots reads several limiters at once, as a metrics exporter does
// at each collection. AcquireClass takes a server's slot for a class, waiting where the
// limiter may (Waits); Sendable tells whether a client may send a context's class, by the
// rule of class names; RetryHint writes a rejection's retry hint, clamped.
package integration
