package integration_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/integration"
)

// call is a call as a test server knows it: the value it sends, and whether it is trusted.
type call struct {
	value   string
	trusted bool
}

func callValues(c call) []string {
	if c.value == "" {
		return nil
	}
	return []string{c.value}
}

func callTrusted(c call) bool { return c.trusted }

func classedLimiter(t *testing.T) *adaptivelimit.Limiter {
	l, err := adaptivelimit.New(adaptivelimit.Config{Name: "api", Classes: []adaptivelimit.Class{{Name: "critical", Reserve: 0.5}, {Name: "batch"}}})
	require.NoError(t, err)
	return l
}

// classOf returns the class that s gives c's handler.
func classOf(t *testing.T, s *integration.ClassSource[call], c call) string {
	ctx, p, err := s.Acquire(context.Background(), c)
	require.NoError(t, err)
	p.Cancel()
	class, _ := adaptivelimit.ClassFromContext(ctx)
	return class
}

func TestClassSourceMap(t *testing.T) {
	allowed := map[string]string{"high": "critical", "low": "batch"}
	s := integration.NewClassSource(nil, integration.NewClassMap(callValues, allowed, callTrusted))
	allowed["high"] = "batch" // allowed is copied
	require.NoError(t, s.Bind(classedLimiter(t), "HeaderClass"))

	require.Equal(t, "critical", classOf(t, &s, call{"high", true}))
	require.Equal(t, "batch", classOf(t, &s, call{"low", true}))
	require.Equal(t, "", classOf(t, &s, call{"high", false}), "an untrusted caller gets the lowest class")
	require.Equal(t, "", classOf(t, &s, call{"critical", true}), "only listed values count")
	require.Equal(t, "", classOf(t, &s, call{"", true}))
}

func TestClassSourceFunc(t *testing.T) {
	s := integration.NewClassSource(func(c call) string { return c.value }, nil)
	require.NoError(t, s.Bind(classedLimiter(t), "HeaderClass"))
	require.Equal(t, "critical", classOf(t, &s, call{value: "critical"}))

	var none integration.ClassSource[call]
	require.NoError(t, none.Bind(classedLimiter(t), "HeaderClass"), "the zero ClassSource names no class")
	require.Equal(t, "", classOf(t, &none, call{value: "critical"}))
}

func TestClassSourceBindErrors(t *testing.T) {
	l := classedLimiter(t)
	for _, tc := range []struct {
		s    integration.ClassSource[call]
		want string
	}{
		{integration.NewClassSource[call](nil, nil), "WithClassFrom(nil)"},
		{integration.NewClassSource(nil, integration.NewClassMap(callValues, map[string]string{"high": "critical"}, nil)),
			"HeaderClass with a nil trusted"},
		{integration.NewClassSource(nil, integration.NewClassMap(callValues, map[string]string{"high": "Critical"}, callTrusted)),
			`HeaderClass maps to class "Critical", which limiter "api" lacks (its classes: ["critical" "batch"])`},
	} {
		require.EqualError(t, tc.s.Bind(l, "HeaderClass"), tc.want)
	}
}
