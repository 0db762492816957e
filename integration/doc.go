// Package integration is for authors of integrations: the plumbing that this repository's
// integrations (grpclimit, connectlimit, promlimit, otellimit) share across their modules.
// Applications do not need it; they use the root package and an integration.
//
// A StreamPermit holds a streaming call's slot until the stream ends, whichever goroutine
// sees the end first. Snapshots reads several limiters at once, as a metrics exporter does
// at each collection.
package integration
