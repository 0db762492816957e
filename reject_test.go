package adaptivelimit

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Rejections counted at once on every P, by more goroutines than Ps that the scheduler
// preempts and moves between them, are all counted: an increment that a preemption or
// another P's increment split would lose them in bulk.
func TestRejectionsCounted(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	l, err := New(Config{InitialLimit: 1, MinLimit: 1, MaxLimit: 1})
	require.NoError(t, err)
	held, err := l.Acquire()
	require.NoError(t, err)
	defer held.Cancel()
	const goroutines, calls = 16, 100_000
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for i := range calls {
				if _, err := l.Acquire(); err == nil {
					t.Error("admitted past a full limit")
					return
				}
				if i%1000 == 0 {
					runtime.Gosched()
				}
			}
		})
	}
	wg.Wait()
	require.Equal(t, uint64(goroutines*calls), l.Snapshot().Rejected)
}
