package adaptivelimit

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Each change of the limit is one Info record with every field of the decision; a window
// that keeps the limit logs nothing.
func TestLogLimitChanges(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	l, clock := newManual(t, Config{Name: "orders", Algorithm: AIMD, InitialLimit: 10, MinWindowSamples: 1,
		OnLimitChange: LogLimitChanges(logger)})

	p, err := l.Acquire()
	require.NoError(t, err)
	clock.Advance(time.Second)
	p.Done(context.DeadlineExceeded) // a drop: 10 -> 9
	q, err := l.Acquire()
	require.NoError(t, err)
	clock.Advance(time.Second)
	q.Done(nil) // one call of 9 in flight: AIMD keeps the limit

	var rec map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &rec), "one record: %s", buf.String())
	delete(rec, "time")
	require.Equal(t, map[string]any{
		"level": "INFO", "msg": "adaptive limit changed", "name": "orders",
		"limitBefore": 10.0, "limitAfter": 9.0, "samples": 1.0, "drops": 1.0,
		"meanLatency": 0.0, "maxInFlight": 1.0, "longLatency": 0.0, "gradient": 0.0, "cause": "drop",
	}, rec)
}
