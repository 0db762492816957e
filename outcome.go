package adaptivelimit

import (
	"fmt"
	"sync/atomic"
)

// Outcome is what a finished call says about the dependency's load, for callers that
// classify a call by a status rather than by an error: the HTTP and gRPC integrations.
type Outcome int

const (
	// Sample is a healthy call: its latency is a sample.
	Sample Outcome = iota
	// Drop is a call that the dependency was too loaded to serve: a sample marked as a drop,
	// which the algorithms but Gradient2 act on (see Config.DropOn).
	Drop
	// Ignore is a call that says nothing about load: its slot is freed without a sample.
	Ignore
	// Departed is a call whose caller went away before it ended (disconnected, cancelled, or
	// past its own deadline). It is a drop only while the windows show the dependency queueing
	// and the call ran longer than the dependency's unqueued latency, else ignored, so that
	// callers who leave at will cannot drive the limit down (docs/behaviour.md#departures).
	Departed
)

func (o Outcome) String() string {
	switch o {
	case Sample:
		return "sample"
	case Drop:
		return "drop"
	case Ignore:
		return "ignore"
	case Departed:
		return "departed"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Finish finishes the call with an outcome the caller classified, and clears p: Sample is
// Done(nil); Drop a sample marked as a drop whatever DropOn says; Departed as its doc says;
// Ignore, or any other value, is Cancel but counted in Snapshot.Ignored, not as cancelled.
func (p *Permit) Finish(o Outcome) {
	if o == Sample {
		p.Done(nil)
		return
	}
	q := p.ticket
	if q.l == nil {
		return
	}
	p.ticket = ticket{}
	switch o {
	case Drop:
		q.l.drop(q)
	case Departed:
		q.l.depart(q)
	default:
		q.l.ignore(q)
	}
}

// outcomes counts calls finished without a sample, on its own line as every processor adds.
type outcomes struct {
	ignored   atomic.Uint64 // Done with an error that DropOn ignores, and Finish(Ignore)
	cancelled atomic.Uint64 // Cancel
	_         [cacheLineSize - 16]byte
}
