package modename

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

type mode string

func (m mode) String() string { return string(m) }

func TestSet(t *testing.T) {
	s := Of[mode]("b", "a")
	s.Add("c")
	if diff := cmp.Diff([]string{"a", "b", "c"}, s.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	if m, err := s.Parse("pkg", "b"); err != nil || m != "b" {
		t.Errorf(`Parse("b") = %q, %v; want "b", nil`, m, err)
	}
	m, err := s.Parse("pkg", "z")
	want := `pkg: unknown gradient mode "z" (want a, b, c)`
	if err == nil || err.Error() != want || m != "" {
		t.Errorf(`Parse("z") = %q, %v; want "", %s`, m, err, want)
	}
}
