//go:build !(amd64 || arm64) || purego

package clock

func ticks() int64 { return nanotime() }

func tickCounterSafe() bool { return false }

func tickPeriod() float64 { return 1 }
