package adaptivelimit

import (
	"cmp"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Every Config field is a key, a callback or the name, so that a registry merges and
// compares it: a field added without a key fails here.
func TestEveryConfigFieldHasAKey(t *testing.T) {
	var c Config
	covered := map[uintptr]string{reflect.ValueOf(&c.Name).Pointer(): "name"}
	for _, ks := range [][]keySpec{keys, callbacks} {
		for i := range ks {
			p := reflect.ValueOf(ks[i].field(&c)).Pointer()
			require.NotContains(t, covered, p, "%s sets a field that another key sets", ks[i].name)
			covered[p] = ks[i].name
		}
	}
	v := reflect.ValueOf(&c).Elem()
	for i := range v.NumField() {
		require.Contains(t, covered, v.Field(i).Addr().Pointer(),
			"Config.%s has no entry in keys or callbacks", v.Type().Field(i).Name)
	}
}

// Each key's default, as the reference shows it, reads back as the default.
func TestKeyFormatParses(t *testing.T) {
	def, err := Config{}.resolved()
	require.NoError(t, err)
	for i := range keys {
		k := &keys[i]
		var c Config
		rule, _ := k.set(&c, k.format(&def))
		require.Empty(t, rule, k.name)
		require.True(t, k.same(&c, &def), k.name)
	}
}

func TestKeyParseErrors(t *testing.T) {
	for _, tc := range []struct{ key, text, code, rule string }{
		{"maxLimit", "ten", "R4C-REG-001", "must be an integer"},
		{"maxLimit", "1.5", "R4C-REG-001", "must be an integer"},
		{"maxLimit", "99999999999999999999", "R4C-REG-001", "must be an integer"},
		{"smoothing", "half", "R4C-REG-001", "must be a number"},
		{"window", "5", "R4C-ATR-001", "must be a Go duration such as 500ms or 2s"},
		{"window", "1 s", "R4C-ATR-001", "must be a Go duration"},
		{"enabled", "yes", "R4C-REG-001", "must be true or false"},
		{"dryRun", "1", "R4C-REG-001", "must be true or false"},
		{"algorithm", "netflix", "R4C-REG-001", "must be one of gradient2, aimd, vegas"},
		{"algorithm", "default", "R4C-REG-001", "must be one of gradient2, aimd, vegas"},
	} {
		var c Config
		rule, sentinel := keyNamed(tc.key).set(&c, tc.text)
		require.Equal(t, tc.code, codeOf(sentinel), tc.key+"="+tc.text)
		require.Contains(t, rule, tc.rule)
		require.True(t, strings.HasPrefix(sentinel.Error(), tc.code+": "))
	}
	var c Config
	for _, text := range []string{"AIMD", "aimd", "Aimd"} {
		rule, _ := keyNamed("algorithm").set(&c, text)
		require.Empty(t, rule)
		require.Equal(t, AIMD, c.Algorithm)
	}
	rule, _ := keyNamed("enabled").set(&c, "FALSE")
	require.Empty(t, rule)
	require.True(t, c.Disabled)
}

// kind names a key's type in the configuration reference.
func kind(k *keySpec) string {
	if k.values != nil {
		return "name"
	}
	switch k.field(&Config{}).(type) {
	case *int:
		return "integer"
	case *float64:
		return "number"
	case *time.Duration:
		return "duration"
	case *bool:
		return "boolean"
	case *[]Class:
		return "classes"
	}
	panic("no kind for key " + k.name)
}

// fieldOf names the Config field a key sets, as the configuration reference shows it.
func fieldOf(k *keySpec) string {
	var c Config
	v := reflect.ValueOf(&c).Elem()
	p := reflect.ValueOf(k.field(&c)).Pointer()
	for i := range v.NumField() {
		if v.Field(i).Addr().Pointer() == p {
			if k.negate {
				return "not `" + v.Type().Field(i).Name + "`"
			}
			return "`" + v.Type().Field(i).Name + "`"
		}
	}
	panic("no field for key " + k.name)
}

// The key table of docs/configuration.md is the code's: a key added, renamed or changed in
// one and not the other fails here.
func TestConfigurationReference(t *testing.T) {
	def, err := Config{}.resolved()
	require.NoError(t, err)
	var want []string
	for i := range keys {
		k := &keys[i]
		var codes []string
		for _, sentinel := range k.errs {
			codes = append(codes, codeOf(sentinel))
		}
		code := cmp.Or(strings.Join(codes, ", "), "none")
		want = append(want, fmt.Sprintf("| `%s` | %s | %s | %s | %s | %s |", k.name, fieldOf(k), kind(k), k.format(&def), k.valid, code))
	}
	doc, err := os.ReadFile("docs/configuration.md")
	require.NoError(t, err)
	_, keysSection, _ := strings.Cut(string(doc), "\n## Keys\n")
	keysSection, _, _ = strings.Cut(keysSection, "\n## ")
	var got []string
	for line := range strings.Lines(keysSection) {
		if strings.HasPrefix(line, "| `") {
			got = append(got, strings.TrimSpace(line))
		}
	}
	require.Equal(t, want, got, "docs/configuration.md's key table should read:\n%s", strings.Join(want, "\n"))
}

// codeOf returns the code of sentinel, one of the ErrXxx.
func codeOf(sentinel error) string { return sentinel.(*configCode).code }
