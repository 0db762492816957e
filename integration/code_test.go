package integration_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/integration"
)

// Exactly gRPC's DeadlineExceeded (4), ResourceExhausted (8) and Unavailable (14) are drops,
// of all its codes (0 to 16) and one past them.
func TestDropCode(t *testing.T) {
	for c := uint32(0); c <= 17; c++ {
		require.Equal(t, c == 4 || c == 8 || c == 14, integration.DropCode(c), "code %d", c)
	}
}

func TestCodeOutcome(t *testing.T) {
	code := func(c uint32) func(error) uint32 { return func(error) uint32 { return c } }
	require.Equal(t, adaptivelimit.Sample, integration.CodeOutcome(nil, code(14)), "a nil error is a sample, whatever its code")
	failed := errors.New("failed")
	require.Equal(t, adaptivelimit.Drop, integration.CodeOutcome(failed, code(8)))
	require.Equal(t, adaptivelimit.Ignore, integration.CodeOutcome(failed, code(1)))
	require.Equal(t, adaptivelimit.Ignore, integration.CodeOutcome(failed, code(13)))
}
