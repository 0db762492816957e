package adaptivelimit

// A layer is one level of a registry's precedence: a Config from code, whose zero fields are
// unset, or the external keys under one prefix, each set as written, zero and false included.
type layer struct {
	label   string            // a code layer's name in errors: "Defaults", `Configs["backend"]`
	cfg     Config            // the values
	written map[string]origin // an external layer's keys by name; nil for a code layer
}

// origin is where an external key's value came from.
type origin struct {
	key  string // the key as written: "configs.backend.adaptiveLimit.backoffRatio"
	text string // the value as written
	line int    // its line in the text ParseProperties read, or 0
}

func (l *layer) sets(k *keySpec) bool {
	if l.written != nil {
		_, ok := l.written[k.name]
		return ok
	}
	return !k.value(&l.cfg).IsZero()
}

// merge applies layers, lowest first, and returns the Config they make before defaults, and
// for each key the layer whose value it holds (nil where none set it).
func merge(layers []*layer) (Config, []*layer) {
	var c Config
	from := make([]*layer, len(keys))
	for _, l := range layers {
		for i := range keys {
			if l.sets(&keys[i]) {
				keys[i].value(&c).Set(keys[i].value(&l.cfg))
				from[i] = l
			}
		}
		for i := range callbacks {
			if l.sets(&callbacks[i]) {
				callbacks[i].value(&c).Set(callbacks[i].value(&l.cfg))
			}
		}
	}
	return c, from
}

// finish gives c, merged from layers, its defaults and checks it; a zero that an external key
// set is checked, not replaced by the default.
func finish(c Config, from []*layer) (Config, error) {
	d := c.withDefaults()
	for i, l := range from {
		if l != nil && l.written != nil {
			keys[i].value(&d).Set(keys[i].value(&c))
		}
	}
	return d, d.validate()
}

// resolve returns the valid Config that layers make for the limiter called name, or the
// error of its first invalid key, named as the layer that set it spells it.
func resolve(name string, layers []*layer) (Config, error) {
	c, from := merge(layers)
	c.Name = name
	d, err := finish(c, from)
	if err != nil {
		return Config{}, blame(err, from)
	}
	return d, nil
}

// check validates l on its own, for the limiter instance if any. Other layers may complete it
// at a call site, so an unset maxLimit is raised as far as l's bounds need, and an error on a
// key l does not set (a beta missing for its alpha) is left to the call site.
func (l *layer) check(instance string) error {
	c, from := merge([]*layer{l})
	if !l.sets(keyNamed("maxLimit")) {
		c.MaxLimit = max(defaultMaxLimit, c.MinLimit, c.InitialLimit)
	}
	_, err := finish(c, from)
	ce, ok := err.(*ConfigError)
	if !ok {
		return err
	}
	if k := keyNamed(ce.Key); k != nil && !l.sets(k) {
		return nil
	}
	ce.Instance = instance
	return blame(ce, from)
}

// blame makes a validation error name the key as the layer that set it spells it.
func blame(err error, from []*layer) error {
	ce, ok := err.(*ConfigError)
	if !ok {
		return err
	}
	for i, l := range from {
		if l == nil || keys[i].name != ce.Key {
			continue
		}
		if s, ok := l.written[ce.Key]; ok {
			ce.Key, ce.Value, ce.Line = s.key, s.text, s.line
		} else if l.label != "" {
			ce.Key = l.label + "." + ce.Key
		}
		break
	}
	return ce
}
