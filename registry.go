package adaptivelimit

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// RegistryConfig is what a Registry makes its limiters from.
type RegistryConfig struct {
	// Defaults applies to every limiter.
	Defaults Config
	// Configs are named configurations, which a call site selects with Site.Config.
	Configs map[string]Config
	// Properties are external keys, as ParseProperties reads them: defaults.adaptiveLimit.<key>,
	// configs.<name>.adaptiveLimit.<key> and instances.<id>.adaptiveLimit.<key>; others ignored.
	Properties map[string]string
	// Clock, where set, is the clock of every limiter, whatever the configurations say. A
	// ManualClock makes a whole registry deterministic.
	Clock Clock
}

// Site is what a call site asks a Registry for.
type Site struct {
	// Name is the limiter's instance id, shared by the call sites that give it. Empty means
	// the call site's own id.
	Name string
	// Config selects a named configuration, from RegistryConfig.Configs or the
	// configs.<name> keys. Empty means none.
	Config string
	// Attrs are the call site's own attributes. Their Name is not used.
	Attrs Config
}

// Registry makes limiters by instance id, and shares each among the call sites that give its
// name. A limiter's Config merges these levels key by key, each overriding those before it:
//
//  1. the built-in defaults (Config's field comments)
//  2. RegistryConfig.Defaults
//  3. the defaults.adaptiveLimit.* keys
//  4. the named configuration in RegistryConfig.Configs that the call site selects
//  5. the configs.<name>.adaptiveLimit.* keys of that configuration
//  6. the call site's Attrs
//  7. the instances.<id>.adaptiveLimit.* keys of the limiter's name
//
// A zero Config field is unset at every level; an external key sets the value it gives, zero
// and false included (instances.<id>.adaptiveLimit.enabled=true turns on a limiter that Attrs
// disable). A Registry is safe for concurrent use.
type Registry struct {
	defaults  []*layer            // levels 2 and 3
	configs   map[string][]*layer // levels 4 and 5, by name
	instances map[string]*layer   // level 7, by id
	clock     *layer              // RegistryConfig.Clock, above every level

	mu       sync.Mutex
	limiters map[string]*Limiter
}

// NewRegistry returns a registry for rc, or the *ConfigError of the first bad key of
// rc.Properties or level checked on its own. How the levels meet (a minLimit above another's
// maxLimit, an alpha without another's beta) is checked in Limiter, as a call site resolves them.
func NewRegistry(rc RegistryConfig) (*Registry, error) {
	r := &Registry{
		configs:   make(map[string][]*layer),
		instances: make(map[string]*layer),
		clock:     &layer{cfg: Config{Clock: rc.Clock}},
		limiters:  make(map[string]*Limiter),
	}
	ext, err := readProperties(rc.Properties)
	if err != nil {
		return nil, err
	}
	r.defaults = appendLayers(&layer{label: "Defaults", cfg: rc.Defaults}, ext[levelKey{level: "defaults"}])
	for name, c := range rc.Configs {
		r.configs[name] = []*layer{{label: fmt.Sprintf("Configs[%q]", name), cfg: c}}
	}
	for lk, l := range ext {
		switch lk.level {
		case "configs":
			r.configs[lk.name] = append(r.configs[lk.name], l)
		case "instances":
			r.instances[lk.name] = l
		}
	}
	if err := r.check(); err != nil {
		return nil, err
	}
	return r, nil
}

// check checks every level on its own, in the order of the precedence and of the names.
func (r *Registry) check() error {
	for _, l := range r.defaults {
		if err := l.check(""); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.configs)) {
		for _, l := range r.configs[name] {
			if err := l.check(""); err != nil {
				return err
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(r.instances)) {
		if err := r.instances[id].check(id); err != nil {
			return err
		}
	}
	return nil
}

func appendLayers(ls ...*layer) []*layer {
	return slices.DeleteFunc(ls, func(l *layer) bool { return l == nil })
}

// Limiter returns the limiter named site.Name, or id where that is empty, creating it on the
// first call. Later calls with the name share it where their levels resolve to the same Config
// key by key, callbacks (DropOn, OnLimitChange) matching where they run the same code; else a
// *ConfigError with R4C-REG-008 names the keys that differ and both values. A site.Config that
// names no configuration gets R4C-REG-004.
func (r *Registry) Limiter(id string, site Site) (*Limiter, error) {
	name := cmp.Or(site.Name, id)
	if name == "" {
		return nil, &ConfigError{Key: "id", Value: `""`, Rule: "a call site needs an id or a name",
			sentinel: ErrInvalidTuning}
	}
	layers := slices.Clone(r.defaults)
	if site.Config != "" {
		named, ok := r.configs[site.Config]
		if !ok {
			return nil, &ConfigError{Instance: name, Key: "config", Value: site.Config,
				Rule:     "no configuration has this name; there are: " + strings.Join(slices.Sorted(maps.Keys(r.configs)), ", "),
				sentinel: ErrUnknownConfig}
		}
		layers = append(layers, named...)
	}
	layers = appendLayers(append(layers, &layer{label: "Attrs", cfg: site.Attrs}, r.instances[name], r.clock)...)
	c, err := resolve(name, layers)
	if err != nil {
		return nil, err
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if l, ok := r.limiters[name]; ok {
		if err := conflict(id, &l.cfg, &c); err != nil {
			return nil, err
		}
		return l, nil
	}
	l, err := New(c)
	if err != nil {
		return nil, err
	}
	r.limiters[name] = l
	return l, nil
}

// conflict returns nil where c, call site id's Config, agrees with had, else R4C-REG-008's error.
func conflict(id string, had, c *Config) error {
	var names, here, there []string
	for _, ks := range [][]keySpec{keys, callbacks} {
		for i := range ks {
			if !ks[i].same(had, c) {
				names = append(names, ks[i].name)
				here = append(here, ks[i].format(c))
				there = append(there, ks[i].format(had))
			}
		}
	}
	if names == nil {
		return nil
	}
	return &ConfigError{Instance: c.Name, Key: strings.Join(names, ", "), Value: strings.Join(here, ", "),
		Rule: fmt.Sprintf("call site %q resolves to this, but the limiter shared under this name has %s",
			id, strings.Join(there, ", ")),
		sentinel: ErrConfigConflict}
}

// Get returns the limiter whose instance id is id, or a *ConfigError with R4C-REG-009 if no
// call site has created it.
func (r *Registry) Get(id string) (*Limiter, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if l, ok := r.limiters[id]; ok {
		return l, nil
	}
	return nil, &ConfigError{Key: "id", Value: id, Rule: "no limiter has this id: Limiter creates it",
		sentinel: ErrUnknownInstance}
}

// Snapshot returns the snapshot of every limiter, sorted by name.
func (r *Registry) Snapshot() []Snapshot {
	r.mu.Lock()
	ls := slices.Collect(maps.Values(r.limiters))
	r.mu.Unlock()
	snaps := make([]Snapshot, len(ls))
	for i, l := range ls {
		snaps[i] = l.Snapshot()
	}
	slices.SortFunc(snaps, func(a, b Snapshot) int { return strings.Compare(a.Name, b.Name) })
	return snaps
}
