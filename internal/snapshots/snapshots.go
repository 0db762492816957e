// Package snapshots is where the metrics adapters read limiters from.
package snapshots

import "github.com/resilience4cata/adaptivelimit"

// Of returns a function that reads the limiters' snapshots, in the order given. It keeps its
// own copy of the list.
func Of(limiters []*adaptivelimit.Limiter) func() []adaptivelimit.Snapshot {
	limiters = append([]*adaptivelimit.Limiter(nil), limiters...)
	return func() []adaptivelimit.Snapshot {
		s := make([]adaptivelimit.Snapshot, len(limiters))
		for i, l := range limiters {
			s[i] = l.Snapshot()
		}
		return s
	}
}
