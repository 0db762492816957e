package main

import (
	"slices"
	"strconv"
	"strings"
)

// readsOf is how many times each algorithm reads the clock per admitted call: Gradient2 times
// the call; AIMD uses no latency and reads the clock only to find the window's end.
var readsOf = map[string]int{"gradient2": 2, "aimd": 1}

// timedClocks are the clocks with a floor of their own.
var timedClocks = []string{"ticks", "nanotime"}

// zeroAllocFamilies are the calls that must not allocate, at any GOMAXPROCS.
var zeroAllocFamilies = []string{"Admit/", "Lease/", "Reject/impl=adaptivelimit", "Overload/impl=adaptivelimit",
	"Solo/", "WindowClose/", "AdmitClass/", "RejectClass/", "OverloadClass/", "SnapshotClass"}

// soloAlgorithms are the algorithms of BenchmarkSolo, each with the tick counter.
var soloAlgorithms = []string{"gradient2", "aimd"}

// targets lists the gate's targets (see README.md), with par the GOMAXPROCS of the parallel
// figures and cpus every GOMAXPROCS at which the overload and one-goroutine targets hold.
// The allocation targets cover every matching benchmark present in s.
func targets(par int, cpus []int, s series) []target {
	var ts []target
	for _, c := range timedClocks {
		ts = append(ts, ratio(admit("gradient2", c), floorOf(c, readsOf["gradient2"]), 1, true, 1.10))
	}
	ts = append(ts,
		ratio(admit("gradient2", "default"), admit("gradient2", "nanotime"), 1, true, 1.0),
	)
	// Overload at every GOMAXPROCS: a rejection, and a mix of rejections and a few admitted
	// calls, cost what the bulkhead's do; one goroutine costs what it costs on one P.
	for _, procs := range cpus {
		ts = append(ts,
			ratio(reject("adaptivelimit"), reject("floor"), procs, true, 1.3),
			ratio(overload("adaptivelimit"), overload("floor"), procs, true, 1.3))
	}
	// Priority classes at every GOMAXPROCS: a classed call costs about what a classless one
	// does, the same slot path with one compare more and its count by class on its P's line.
	for _, procs := range cpus {
		ts = append(ts,
			ratio(admitClass, admit("gradient2", "default"), procs, true, 1.2),
			ratio(rejectClass, reject("adaptivelimit"), procs, true, 1.5),
			ratio(overloadClass, overload("adaptivelimit"), procs, true, 1.3))
	}
	for _, alg := range soloAlgorithms {
		for _, procs := range cpus {
			if procs != 1 {
				ts = append(ts, target{unit: "sec/op", num: key{solo(alg), procs}, den: key{solo(alg), 1},
					atMost: true, bound: 1.1})
			}
		}
	}
	for _, alg := range []string{"gradient2", "aimd"} {
		for _, c := range timedClocks {
			ts = append(ts, ratio(admit(alg, c), floorOf(c, readsOf[alg]), par, true, 1.0))
		}
	}
	// Per-P slot leases: par goroutines on par Ps write no line in common, so each call may
	// cost at most 1.2 times what it costs alone, and the wall time per call falls with par.
	ts = append(ts, target{unit: "sec/op", num: key{admit("gradient2", "ticks"), par},
		den: key{admit("gradient2", "ticks"), 1}, atMost: true, bound: 1.2 / float64(par)})
	ts = append(ts, allocTargets(s)...)
	return append(ts,
		ratio(peer("failsafe"), admit("gradient2", "default"), 1, false, 5),
		ratio(peer("failsafe"), admit("gradient2", "default"), par, false, 3),
	)
}

func allocTargets(s series) []target {
	var ts []target
	for _, family := range zeroAllocFamilies {
		var keys []key
		for k := range s {
			if strings.HasPrefix(k.name, family) {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			keys = append(keys, key{family + "*", 1}) // reported as missing
		}
		slices.SortFunc(keys, func(a, b key) int {
			return strings.Compare(a.String(), b.String())
		})
		for _, k := range keys {
			ts = append(ts, target{unit: "allocs/op", num: k, atMost: true, bound: 0})
		}
	}
	return ts
}

// ratio compares the times of two benchmarks at the same GOMAXPROCS, pass by pass.
func ratio(num, den string, procs int, atMost bool, bound float64) target {
	return target{unit: "sec/op", num: key{num, procs}, den: key{den, procs}, atMost: atMost, bound: bound}
}

func admit(alg, clock string) string { return "Admit/alg=" + alg + "/clock=" + clock }

func floorOf(clock string, reads int) string {
	return "Floor/clock=" + clock + "/reads=" + strconv.Itoa(reads)
}

func reject(impl string) string { return "Reject/impl=" + impl }

// The classed benchmarks the gate holds to their classless ones.
const (
	admitClass    = "AdmitClass/alg=gradient2"
	rejectClass   = "RejectClass/impl=adaptivelimit"
	overloadClass = "OverloadClass/impl=adaptivelimit"
)

func overload(impl string) string { return "Overload/impl=" + impl }

func solo(alg string) string { return "Solo/alg=" + alg + "/clock=ticks" }

func peer(name string) string { return "Peer/peer=" + name }
