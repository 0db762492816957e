package adaptivelimit

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every class is found by its name, whether the caller passes the very string that
// configured it, a copy of its bytes, or one whose bytes begin where a class's do; a name no
// class has means the lowest class, and so does "". Eight classes whose names share one
// buffer, as substrings of one string, put their bytes a few addresses apart, the hardest
// case for byBytes' table: some entries collide, and lookup must find those.
func TestClassLookup(t *testing.T) {
	buffer := "abcdefghijklmnopqrstuvwxyz0123456789"
	for _, n := range []int{1, 3, MaxClasses} {
		for _, stride := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("classes=%d/stride=%d", n, stride), func(t *testing.T) {
				classes := make([]Class, n)
				for c := range classes {
					classes[c].Name = buffer[c*stride : c*stride+stride+1] // overlapping: each begins inside the one before
				}
				cs := newClassed(t, 10, classes).classes
				for c, class := range classes {
					require.Equal(t, c, cs.named(class.Name).c, "the configuring string %q", class.Name)
					require.Equal(t, c, cs.named(strings.Clone(class.Name)).c, "a copy of %q", class.Name)
					if got := cs.same(class.Name); got != nil {
						require.Equal(t, c, got.c, "same finds %q only as itself", class.Name)
					}
					prefix := class.Name[:1] // the same first byte, another length
					require.Nil(t, cs.same(prefix), "%q is not %q", prefix, class.Name)
				}
				require.Equal(t, n-1, cs.named("no such class").c)
				require.Equal(t, n-1, cs.named("").c)
			})
		}
	}
}

// Names from constants, as callers most often give them, each get an entry of their own, so
// that AcquireClass compares no bytes.
func TestClassLookupByBytes(t *testing.T) {
	cs := newClassed(t, 10, threeClasses).classes
	for c, class := range threeClasses {
		ce := cs.same(class.Name)
		require.NotNil(t, ce, "%q", class.Name)
		require.Equal(t, c, ce.c, "%q", class.Name)
	}
}
