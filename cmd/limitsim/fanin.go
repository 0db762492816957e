package main

// faninClients is the fanin scenario's fleet: 1000 clients in front of 50 servers, each
// client's fair share 0.05 calls in flight.
const faninClients = 1000

// The fanin scenario in real time: 200 clients in front of 20 workers, 10 a worker, and
// LossDelay beside itself as it was before limits below one call in flight.
const faninRealClients = 200

var faninRealKinds = []string{"lossdelay", unitFloorKind}

// faninKinds are the fanin scenario's policies: its high bulkhead is most often its low
// one, one call in flight, and is left out.
var faninKinds = []string{"gradient2", "aimd", "vegas", "lossdelay", "low", "none"}

// fitBulkheads sizes the fanin scenario's fixed bulkheads to its fleet, once -servers and
// -clients are known: the fair share and three times it, each at least one call in flight,
// the least a bulkhead can be. -low and -high, where set, come after. Other scenarios keep
// their presets' bulkheads.
func (sc *scenario) fitBulkheads() {
	if sc.name != "fanin" {
		return
	}
	sc.low, sc.high = max(1, sc.servers/sc.clients), max(1, 3*sc.servers/sc.clients)
}
