package adaptivelimit

import (
	"bufio"
	"io"
	"maps"
	"reflect"
	"strings"
	"sync"
)

// ParseProperties reads a .properties text: key=value or key: value on each line (the first =
// or : ends the key), spaces around both trimmed. Blank lines and lines that start with # or !
// are skipped. A line that ends with a backslash goes on in the next, without its leading
// spaces; on the last line, the backslash is dropped. A key written twice takes its last
// value. A line with no = or :, or nothing before it, is a *ConfigError with its line number,
// and so are NewRegistry's errors on the keys of a map that ParseProperties returned.
func ParseProperties(r io.Reader) (map[string]string, error) {
	props := make(map[string]string)
	lines := make(map[string]int)
	br := bufio.NewReader(r)
	var logical strings.Builder // a line with its continuations
	n, start := 0, 0
	for {
		line, err := br.ReadString('\n')
		if err != nil && err != io.EOF {
			return nil, err
		}
		if line == "" && err == io.EOF && logical.Len() == 0 {
			break // else the last line ended with a continuation: store what it began
		}
		n++
		line = strings.TrimLeft(strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r"), " \t\f")
		if logical.Len() == 0 {
			if line == "" || line[0] == '#' || line[0] == '!' {
				continue
			}
			start = n
		}
		if cont, ok := strings.CutSuffix(line, `\`); ok && err == nil {
			logical.WriteString(cont)
			continue
		}
		logical.WriteString(strings.TrimSuffix(line, `\`))
		key, value, ok := cutProperty(logical.String())
		if !ok {
			return nil, &ConfigError{Value: logical.String(), Rule: "a line must be key=value or key: value",
				Line: start, sentinel: ErrInvalidTuning}
		}
		props[key], lines[key] = value, start
		logical.Reset()
		if err == io.EOF {
			break
		}
	}
	remember(props, lines)
	return props, nil
}

func cutProperty(line string) (key, value string, ok bool) {
	i := strings.IndexAny(line, "=:")
	if i < 0 {
		return "", "", false
	}
	key = strings.TrimSpace(line[:i])
	return key, strings.TrimSpace(line[i+1:]), key != ""
}

// parsed holds the lines of the keys of the last maps ParseProperties returned, since a map
// cannot carry them to NewRegistry.
var parsed struct {
	sync.Mutex
	texts [8]parsedText
	next  int
}

type parsedText struct {
	props  map[string]string
	values map[string]string // the values as parsed, to tell a key changed since
	lines  map[string]int
}

func remember(props map[string]string, lines map[string]int) {
	parsed.Lock()
	defer parsed.Unlock()
	parsed.texts[parsed.next] = parsedText{props: props, values: maps.Clone(props), lines: lines}
	parsed.next = (parsed.next + 1) % len(parsed.texts)
}

// lineOf returns the line ParseProperties read key from, if props is a map it returned and
// key still holds the value read there; otherwise 0.
func lineOf(props map[string]string, key string) int {
	parsed.Lock()
	defer parsed.Unlock()
	for _, t := range parsed.texts {
		if t.props != nil && reflect.ValueOf(t.props).UnsafePointer() == reflect.ValueOf(props).UnsafePointer() {
			if v, ok := t.values[key]; ok && v == props[key] {
				return t.lines[key]
			}
		}
	}
	return 0
}
