//go:build !(amd64 || arm64) || purego

package clock

func ticks() int64 { return 0 }

func tickCounterSafe() bool { return false }

func tickPeriod(func() int64) float64 { return 0 }
