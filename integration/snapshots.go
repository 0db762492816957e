package integration

import "github.com/resilience4cata/adaptivelimit"

// Snapshots returns the snapshots of limiters, in the order given: what an exporter of
// metrics reads at each collection.
func Snapshots(limiters ...*adaptivelimit.Limiter) []adaptivelimit.Snapshot {
	snaps := make([]adaptivelimit.Snapshot, len(limiters))
	for i, l := range limiters {
		snaps[i] = l.Snapshot()
	}
	return snaps
}
