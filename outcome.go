package adaptivelimit

import "fmt"

// Outcome is what a finished call says about the dependency's load, for callers that
// classify a call by a status rather than by an error: the HTTP and gRPC integrations.
type Outcome int

const (
	// Sample is a healthy call: its latency is a sample.
	Sample Outcome = iota
	// Drop is a call that the dependency was too loaded to serve: a sample marked as a drop.
	Drop
	// Ignore is a call that says nothing about load: its slot is freed without a sample.
	Ignore
)

func (o Outcome) String() string {
	switch o {
	case Sample:
		return "sample"
	case Drop:
		return "drop"
	case Ignore:
		return "ignore"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// errDrop is what Finish passes to Done for a Drop. It matches ErrLimitExceeded (the
// dependency shed the call, as a limit inside would), which DefaultDropOn counts as a drop.
var errDrop = fmt.Errorf("adaptivelimit: the dependency is overloaded: %w", ErrLimitExceeded)

// Finish finishes the call with an outcome: Done(nil) for a Sample, Cancel for Ignore (and any
// other value), and
// for a Drop, Done with an error that matches ErrLimitExceeded, which DefaultDropOn counts as
// a drop (a limiter with its own DropOn counts it only if that DropOn accepts it).
func (p *Permit) Finish(o Outcome) {
	switch o {
	case Sample:
		p.Done(nil)
	case Drop:
		p.Done(errDrop)
	default:
		p.Cancel()
	}
}
