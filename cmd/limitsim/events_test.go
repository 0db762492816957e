package main

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestEventQueuePopsInTimeOrderCompletionsFirst(t *testing.T) {
	var q eventQueue
	rng := rand.New(rand.NewPCG(1, 2))
	var want []event
	for i := range 1000 {
		e := event{at: rng.Int64N(100), kind: eventKind(rng.IntN(2)), id: int32(i)}
		q.push(e)
		want = append(want, e)
	}
	slices.SortStableFunc(want, func(a, b event) int {
		if a.before(b) {
			return -1
		}
		if b.before(a) {
			return 1
		}
		return 0
	})
	for i := range want {
		got := q.pop()
		if got.at != want[i].at || got.kind != want[i].kind {
			t.Fatalf("pop %d: got (%d, %d), want (%d, %d)", i, got.at, got.kind, want[i].at, want[i].kind)
		}
	}
	if q.len() != 0 {
		t.Fatalf("%d events left", q.len())
	}
}

func TestFIFOKeepsOrderAcrossGrowthAndWrap(t *testing.T) {
	var f fifo
	next, want := int32(0), int32(0)
	for round := range 50 {
		for range round * 7 {
			f.pushBack(next)
			next++
		}
		for range round * 5 {
			if got := f.popFront(); got != want {
				t.Fatalf("got %d, want %d", got, want)
			}
			want++
		}
	}
	if f.len() != int(next-want) {
		t.Fatalf("len %d, want %d", f.len(), next-want)
	}
}
