package adaptivelimit

import (
	"cmp"
	"maps"
	"slices"
	"strings"
)

const policy = "adaptiveLimit"

// levelKey names the layer of an external key: its level ("defaults", "configs" or
// "instances") and, under configs and instances, the name.
type levelKey struct{ level, name string }

// readProperties turns the keys of props under adaptiveLimit into layers, or returns the
// error of the first key, in the order of the text, that is unknown or does not parse.
func readProperties(props map[string]string) (map[levelKey]*layer, error) {
	lines := make(map[string]int, len(props))
	for key := range props {
		lines[key] = lineOf(props, key)
	}
	ordered := slices.SortedFunc(maps.Keys(props), func(a, b string) int {
		return cmp.Or(cmp.Compare(lines[a], lines[b]), strings.Compare(a, b))
	})
	layers := make(map[levelKey]*layer)
	for _, full := range ordered {
		lk, segment, name, ours := splitKey(full)
		if !ours {
			continue
		}
		src := origin{key: full, text: props[full], line: lines[full]}
		bad := &ConfigError{Key: full, Value: src.text, Line: src.line, sentinel: ErrInvalidTuning}
		if lk.level == "instances" {
			bad.Instance = lk.name
		}
		k := keyNamed(name)
		switch {
		case (lk.level != "defaults") && lk.name == "":
			bad.Rule = "the name before ." + policy + " is empty"
			return nil, bad
		case k == nil || segment != policy:
			bad.Rule = "unknown key: the keys under " + policy + " are " + keyNames()
			return nil, bad
		}
		l := layers[lk]
		if l == nil {
			l = &layer{written: make(map[string]origin)}
			layers[lk] = l
		}
		if bad.Rule, bad.sentinel = k.set(&l.cfg, src.text); bad.Rule != "" {
			return nil, bad
		}
		l.written[name] = src
	}
	return layers, nil
}

// splitKey splits an external key into its layer, the policy's segment as written, and the
// name after it, or reports false for a key of another policy. The segment matches in any
// case, so that a key under "adaptivelimit" is reported as unknown, not ignored.
func splitKey(full string) (lk levelKey, segment, name string, ours bool) {
	parts := strings.Split(full, ".")
	at := -1
	switch parts[0] {
	case "defaults":
		if len(parts) > 1 && strings.EqualFold(parts[1], policy) {
			at = 1
		}
	case "configs", "instances":
		for i := len(parts) - 1; i > 0 && at < 0; i-- {
			if strings.EqualFold(parts[i], policy) {
				at = i
			}
		}
	}
	if at < 0 {
		return levelKey{}, "", "", false
	}
	return levelKey{parts[0], strings.Join(parts[1:at], ".")}, parts[at], strings.Join(parts[at+1:], "."), true
}

func keyNames() string {
	names := make([]string, len(keys))
	for i := range keys {
		names[i] = keys[i].name
	}
	return strings.Join(names, ", ")
}
