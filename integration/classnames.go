package integration

import (
	"fmt"
	"slices"

	"github.com/resilience4cata/adaptivelimit"
)

// CheckClassNames reports the first of names that no call could be given on l: a name that
// breaks the rule of class names (Sendable), or, where l has classes, one that is none of
// them. "" names the lowest class and always passes. A server's integration calls it when it
// is built, with the class names its header or metadata map may yield, and panics with the
// error, so that a misspelt class fails at start-up rather than turning every call of it
// into the lowest class.
func CheckClassNames(l *adaptivelimit.Limiter, names []string) error {
	classes := l.Classes()
	for _, name := range names {
		switch {
		case name == "":
		case !Sendable(name):
			return fmt.Errorf("maps to class %q, whose name breaks the rule of class names", name)
		case classes != nil && !slices.Contains(classes, name):
			return fmt.Errorf("maps to class %q, which limiter %q lacks (its classes: %q)", name, l.Snapshot().Name, classes)
		}
	}
	return nil
}
