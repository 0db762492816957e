package adaptivelimit

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

func TestParseProperties(t *testing.T) {
	text := "# a comment\n" +
		"! another\n" +
		"\n" +
		"   \t\n" +
		"a=1\n" +
		"b: 2\n" +
		"  c  =  three words  \n" +
		"d:e=f\n" +
		"e=x=y\n" +
		"f=\n" +
		"g = one, \\\n" +
		"     two, \\\n" +
		"  three\n" +
		"h=crlf\r\n" +
		"a=last wins\n" +
		"  # indented comment\n" +
		"i=\\\n" +
		"# not a comment: a continuation\n" +
		"j=end of text\\"
	props, err := ParseProperties(strings.NewReader(text))
	require.NoError(t, err)
	require.Equal(t, map[string]string{
		"a": "last wins",
		"b": "2",
		"c": "three words",
		"d": "e=f",
		"e": "x=y",
		"f": "",
		"g": "one, two, three",
		"h": "crlf",
		"i": "# not a comment: a continuation",
		"j": "end of text",
	}, props)
	for key, line := range map[string]int{"a": 15, "b": 6, "g": 11, "h": 14, "i": 17, "j": 19} {
		require.Equal(t, line, lineOf(props, key), key)
	}
}

func TestParsePropertiesMalformed(t *testing.T) {
	for _, tc := range []struct {
		text    string
		line    int
		message string
	}{
		{"a=1\n\nno separator here\n", 3, `R4C-REG-001: line 3: "no separator here": a line must be key=value or key: value`},
		{"=value\n", 1, `"=value"`},
		{"  : value\n", 1, `": value"`},
		{"a=1\nb \\\n  c\n", 2, `"b c"`},
	} {
		props, err := ParseProperties(strings.NewReader(tc.text))
		require.Nil(t, props)
		var ce *ConfigError
		require.ErrorAs(t, err, &ce)
		require.ErrorIs(t, err, ErrInvalidTuning)
		require.Equal(t, CodeInvalidTuning, ce.Code())
		require.Equal(t, tc.line, ce.Line)
		require.Contains(t, err.Error(), tc.message)
	}
}

func TestParsePropertiesReadError(t *testing.T) {
	boom := errors.New("boom")
	_, err := ParseProperties(iotest.ErrReader(boom))
	require.ErrorIs(t, err, boom)
}

// A map's lines are known only while its value is the one ParseProperties read.
func TestLineOfChangedMap(t *testing.T) {
	props, err := ParseProperties(strings.NewReader("a=1\nb=2\n"))
	require.NoError(t, err)
	props["b"] = "3"
	props["c"] = "4"
	require.Equal(t, 1, lineOf(props, "a"))
	require.Zero(t, lineOf(props, "b"))
	require.Zero(t, lineOf(props, "c"))
	require.Zero(t, lineOf(maps.Clone(props), "a"))
}

// Any text gives a registry or a coded *ConfigError, never a panic, and a registry's
// limiters keep their limit within valid bounds.
func FuzzProperties(f *testing.F) {
	f.Add("defaults.adaptiveLimit.maxLimit=100\n" +
		"configs.backend.adaptiveLimit.algorithm=aimd\n" +
		"configs.backend.adaptiveLimit.backoffRatio=0.8\n" +
		"configs.backend.adaptiveLimit.minWindowSamples=20\n" +
		"instances.orders.adaptiveLimit.rttTolerance=2\n")
	f.Add("instances.a.adaptiveLimit.minLimit=300\ninstances.a.adaptiveLimit.maxLimit=400\n")
	f.Add("defaults.adaptiveLimit.window: 500ms\ninstances.x.adaptiveLimit.enabled=false\n")
	f.Add("instances.x.retry.maxAttempts=3\n# comment\n! comment\n")
	f.Add("configs.c.adaptiveLimit.initialLimit=\\\n  5\n")
	f.Add("instances.x.adaptiveLimit.maxLimt=5\n")
	f.Add("garbage\n")
	f.Fuzz(func(t *testing.T, text string) {
		props, err := ParseProperties(strings.NewReader(text))
		if err != nil {
			requireCoded(t, err)
			return
		}
		r, err := NewRegistry(RegistryConfig{Properties: props, Clock: NewManualClock()})
		if err != nil {
			requireCoded(t, err)
			return
		}
		var configs, ids []string
		for key := range props {
			lk, _, _, ours := splitKey(key)
			switch {
			case ours && lk.level == "configs":
				configs = append(configs, lk.name)
			case ours && lk.level == "instances":
				ids = append(ids, lk.name)
			}
		}
		for _, id := range append(ids, "fuzz") {
			for _, config := range append(configs, "") {
				l, err := r.Limiter(id+"#"+config, Site{Name: id, Config: config})
				if err != nil {
					requireCoded(t, err)
					continue
				}
				s := l.Snapshot()
				if s.MinLimit < 1 || s.MinLimit > s.Limit || s.Limit > s.MaxLimit {
					t.Fatalf("%s: limit %d outside [%d, %d]", id, s.Limit, s.MinLimit, s.MaxLimit)
				}
			}
		}
		names := make([]string, 0, len(r.Snapshot()))
		for _, s := range r.Snapshot() {
			names = append(names, s.Name)
		}
		require.True(t, slices.IsSorted(names))
	})
}

func requireCoded(t *testing.T, err error) {
	t.Helper()
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	require.True(t, strings.HasPrefix(ce.Code(), "R4C-"), err.Error())
	require.ErrorIs(t, err, ce.Unwrap())
	require.True(t, strings.HasPrefix(ce.Unwrap().Error(), ce.Code()))
}
