//go:build (amd64 || arm64) && !purego

package clock

// ticks reads the processor's tick counter.
//
//go:noescape
func ticks() int64
