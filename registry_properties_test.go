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

// A continuation on the last line ends with the text: its key is stored, not dropped.
func TestParsePropertiesContinuedLastLine(t *testing.T) {
	for _, tc := range []struct{ text, value string }{
		{"defaults.adaptiveLimit.maxLimit=5\\\n", "5"},
		{"defaults.adaptiveLimit.maxLimit=5\\\r\n", "5"},
		{"defaults.adaptiveLimit.maxLimit=\\\n  5\\\n", "5"},
		{"defaults.adaptiveLimit.maxLimit=\\\r\n  5\\\r\n   ", "5"},
		{"defaults.adaptiveLimit.maxLimit=5\\", "5"},
	} {
		props, err := ParseProperties(strings.NewReader(tc.text))
		require.NoError(t, err, "%q", tc.text)
		require.Equal(t, map[string]string{"defaults.adaptiveLimit.maxLimit": tc.value}, props, "%q", tc.text)
		require.Equal(t, 1, lineOf(props, "defaults.adaptiveLimit.maxLimit"))
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
		require.Equal(t, "R4C-REG-001", ce.Code())
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

// Every key=value line written in any of the ways the format allows (indented or not, with =
// or :, spaces around them or not, a value split by continuations anywhere, continued
// lines indented or not, \n or \r\n, comments and blank lines between, a final newline or
// not) comes back from ParseProperties, the last of a key written twice winning.
func FuzzPropertiesModel(f *testing.F) {
	f.Add([]byte{0, 0, 5, 1, 3, 0})
	f.Add([]byte{1, 0x1f, 9, 2, 4, 7, 0, 9, 2, 0xff, 0xff, 3})
	f.Add([]byte{2, 0x08, 3, 1, 3, 3, 1, 0})
	f.Add([]byte{0, 0x81, 1, 0, 1, 1, 0}) // "a:a\\\r\n": a continuation on the last line
	f.Fuzz(func(t *testing.T, data []byte) {
		text, want := writeProperties(data)
		got, err := ParseProperties(strings.NewReader(text))
		require.NoError(t, err, "%q", text)
		require.Equal(t, want, got, "%q", text)
	})
}

// writeProperties writes the entries that data describes as a .properties text, and returns
// it with the map it stands for.
func writeProperties(data []byte) (string, map[string]string) {
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return int(b)
	}
	keys := []string{"a", "defaults.adaptiveLimit.maxLimit", "configs.c-1.adaptiveLimit.window", "x_y"}
	separators := []string{"=", ":", " = ", "\t: ", "=  "}
	comments := []string{"# a comment", "! another", "", "   ", "#k=v", "  ! indented"}
	const valueChars = "abz09 .,=:#!-"
	var b strings.Builder
	want := make(map[string]string)
	for entries := 0; len(data) > 0 && entries < 16; entries++ {
		key, flags := keys[next()%len(keys)], next()
		nl := "\n"
		if flags&1 != 0 {
			nl = "\r\n"
		}
		if flags&2 != 0 {
			b.WriteString(comments[next()%len(comments)] + nl)
		}
		if flags&4 != 0 {
			b.WriteString(" \t")
		}
		raw := make([]byte, next()%12)
		for i := range raw {
			raw[i] = valueChars[next()%len(valueChars)]
		}
		value := strings.TrimSpace(string(raw))
		// Continuations split the value before any character but a space (a continued line
		// loses its leading spaces), or at its end.
		var splits []int
		for range next() % 4 {
			if at := next() % (len(value) + 1); at == len(value) || value[at] != ' ' {
				splits = append(splits, at)
			}
		}
		slices.Sort(splits)
		b.WriteString(key + separators[(flags>>3)%len(separators)])
		from := 0
		for _, at := range splits {
			b.WriteString(value[from:at] + "\\" + nl + strings.Repeat(" ", next()%3))
			from = at
		}
		b.WriteString(value[from:])
		if len(data) > 0 || flags&0x80 == 0 {
			b.WriteString(nl)
		}
		want[key] = value
	}
	return b.String(), want
}
