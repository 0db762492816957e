package integration_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/integration"
)

func TestCheckClassNames(t *testing.T) {
	classed, err := adaptivelimit.New(adaptivelimit.Config{Name: "api", Classes: []adaptivelimit.Class{{Name: "critical", Reserve: 0.5}, {Name: "batch"}}})
	require.NoError(t, err)
	classless, err := adaptivelimit.New(adaptivelimit.Config{Name: "plain"})
	require.NoError(t, err)

	require.NoError(t, integration.CheckClassNames(classed, []string{"", "critical", "batch"}))
	require.NoError(t, integration.CheckClassNames(classless, []string{"anything"}), "a classless limiter has every call in its one class")
	require.EqualError(t, integration.CheckClassNames(classed, []string{"critical", "Critical"}),
		`maps to class "Critical", which limiter "api" lacks (its classes: ["critical" "batch"])`)
	require.EqualError(t, integration.CheckClassNames(classless, []string{"caf\xe9"}),
		`maps to class "caf\xe9", whose name breaks the rule of class names`)
}
