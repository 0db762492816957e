package adaptivelimit

import (
	"errors"
	"testing"
)

// A name or class name that cannot be exported or sent is refused with R4C-REG-001 naming
// the key, the value and the rule; the names every exporter and wire carries pass.
func TestNamesThatCannotTravel(t *testing.T) {
	for _, c := range []struct {
		cfg   Config
		key   string
		value any
	}{
		{Config{Name: "caf\xe9"}, "name", "caf\xe9"},
		{Config{Name: "api\nv2"}, "name", "api\nv2"},
		{Config{Name: "api\x7f"}, "name", "api\x7f"},
		{Config{Name: "api\u0085"}, "name", "api\u0085"},
		{Config{Classes: []Class{{Name: "café"}}}, "classes", "café:0"},
		{Config{Classes: []Class{{Name: "hi"}, {Name: "lo\r\n"}}}, "classes", "hi:0,lo\r\n:0"},
		{Config{Classes: []Class{{Name: " hi"}}}, "classes", " hi:0"},
	} {
		_, err := New(c.cfg)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Code() != "R4C-REG-001" || !errors.Is(err, ErrInvalidTuning) ||
			ce.Key != c.key || ce.Value != c.value || ce.Rule == "" {
			t.Errorf("New(%+v) = %v, want R4C-REG-001 for %s = %q", c.cfg, err, c.key, c.value)
		}
	}
	for _, cfg := range []Config{
		{Name: "café api"},
		{Name: "订单"},
		{Classes: []Class{{Name: "critical", Reserve: 0.5}, {Name: "best effort"}}},
	} {
		if _, err := New(cfg); err != nil {
			t.Errorf("New(%+v): %v", cfg, err)
		}
	}
}

// The registry refuses them too: an id becomes the limiter's name.
func TestRegistryNamesThatCannotTravel(t *testing.T) {
	r, err := NewRegistry(RegistryConfig{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Limiter("caf\xe9", Site{})
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Code() != "R4C-REG-001" || ce.Key != "name" || ce.Value != "caf\xe9" {
		t.Fatalf("Limiter(\"caf\\xe9\") = %v, want R4C-REG-001 for name", err)
	}
	if _, err := r.Limiter("orders", Site{}); err != nil {
		t.Fatal(err)
	}
}
