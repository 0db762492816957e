package adaptivelimit

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func aimdFor(c Config) *aimd {
	c.Algorithm = AIMD
	c, err := c.resolved()
	if err != nil {
		panic(err)
	}
	return newAIMD(c)
}

func TestAIMDTrajectories(t *testing.T) {
	type step struct {
		drops       uint64
		maxInFlight int
		want        int
	}
	cases := map[string]struct {
		c     Config
		steps []step
	}{
		"grows by one while at least half the slots are used": {
			c:     Config{InitialLimit: 10, MaxLimit: 13},
			steps: []step{{0, 5, 11}, {0, 6, 12}, {0, 5, 12}, {0, 6, 13}, {0, 13, 13}},
		},
		"backs off by the ratio, truncating": {
			c:     Config{InitialLimit: 100},
			steps: []step{{1, 0, 90}, {3, 90, 81}, {1, 0, 72}, {1, 0, 64}, {0, 32, 65}, {1, 65, 58}},
		},
		"down to minLimit and no further": {
			c:     Config{InitialLimit: 4, MinLimit: 2, BackoffRatio: 0.5},
			steps: []step{{1, 4, 2}, {1, 4, 2}, {0, 1, 3}, {1, 1, 2}},
		},
		"a limit of one": {
			c:     Config{InitialLimit: 1, MaxLimit: 1},
			steps: []step{{0, 1, 1}, {1, 1, 1}, {0, 0, 1}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a := aimdFor(tc.c)
			for i, s := range tc.steps {
				require.Equal(t, s.want, a.next(window{drops: s.drops, maxInFlight: s.maxInFlight}, Decision{}).LimitAfter, "step %d", i)
			}
		})
	}
}

// Over long random trajectories AIMD follows its two rules exactly.
func TestAIMDRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	a := aimdFor(Config{InitialLimit: 20, MinLimit: 3, MaxLimit: 150, BackoffRatio: 0.75})
	limit := 20
	for k := range 5000 {
		w := window{maxInFlight: r.IntN(160)}
		if r.IntN(5) == 0 {
			w.drops = 1 + uint64(r.IntN(3))
		}
		switch {
		case w.drops > 0:
			limit = int(float64(limit) * 0.75)
		case 2*w.maxInFlight >= limit:
			limit++
		}
		limit = max(3, min(150, limit))
		require.Equal(t, limit, a.next(w, Decision{}).LimitAfter, "window %d", k)
	}
}
