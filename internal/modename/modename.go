// Package modename keeps values by their names: the gradient modes of
// packages odeblock and sde, which both read a mode from its name
// (ParseGradMode) and list the names (GradModeNames) the same way.
package modename

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Set holds values by their names (their String).
type Set[M fmt.Stringer] map[string]M

// Of returns the Set of ms.
func Of[M fmt.Stringer](ms ...M) Set[M] {
	s := Set[M]{}
	for _, m := range ms {
		s.Add(m)
	}
	return s
}

// Add puts m in s under its name.
func (s Set[M]) Add(m M) { s[m.String()] = m }

// Parse returns the value named name; otherwise an error, prefixed by
// pkg, naming what it read and the names it knows.
func (s Set[M]) Parse(pkg, name string) (M, error) {
	if m, ok := s[name]; ok {
		return m, nil
	}
	var zero M
	return zero, fmt.Errorf("%s: unknown gradient mode %q (want %s)", pkg, name, strings.Join(s.Names(), ", "))
}

// Names returns the names in s, sorted.
func (s Set[M]) Names() []string { return slices.Sorted(maps.Keys(s)) }
