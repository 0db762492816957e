package main

import (
	"bytes"
	"io"
	"testing"
)

// The gate reads whatever a run printed: no input may make it panic. The seeds are small, so
// that the fuzzer's minimizing of what it finds takes little of its time.
func FuzzGate(f *testing.F) {
	f.Add([]byte("BenchmarkReject/impl=adaptivelimit \t10\t3 ns/op\t0 allocs/op\n" +
		"BenchmarkReject/impl=floor \t10\t1 ns/op\t0 allocs/op\n" +
		"BenchmarkReject/impl=adaptivelimit \t10\t2 ns/op\t0 allocs/op\n"))
	f.Add([]byte("goos: linux\nBenchmarkAdmit/alg=aimd/clock=ticks-2 \t1\t40 ns/op\t1 allocs/op\nPASS\n"))
	f.Add([]byte("BenchmarkFloor/clock=ticks/reads=1-2 \t10\t0 ns/op\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		s := series{}
		if err := parse(bytes.NewReader(in), "in", s); err != nil {
			return
		}
		outs := evaluate(targets(2, []int{1, 2}, s), s)
		summary(outs, report(io.Discard, outs))
	})
}
