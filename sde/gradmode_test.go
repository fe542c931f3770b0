package sde

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adamnode/adamnode/autograd"
)

// TestParseGradMode: every name ParseGradMode reads gives the mode of that
// name with its default options, the names are sorted and the ones
// odeblock's modes use for the same algorithms, and an unknown name is an
// error listing the known ones.
func TestParseGradMode(t *testing.T) {
	want := map[string]GradMode{
		"adjoint": Adjoint{}, "backprop": Backprop{}, "checkpoint": Checkpoint{},
		"recursive": Recursive{}, "reversible": Reversible{},
	}
	names := GradModeNames()
	if !slices.IsSorted(names) || len(names) != len(want) {
		t.Errorf("GradModeNames() = %v, want the %d names sorted", names, len(want))
	}
	for _, n := range names {
		m, err := ParseGradMode(n)
		if err != nil {
			t.Fatalf("ParseGradMode(%q): %v", n, err)
		}
		if d := cmp.Diff(want[n], m); d != "" || m.String() != n {
			t.Errorf("ParseGradMode(%q) = %v named %q (-want +got):\n%s", n, m, m.String(), d)
		}
	}
	_, err := ParseGradMode("revolve")
	if err == nil || !strings.Contains(err.Error(), `"revolve"`) || !strings.Contains(err.Error(), strings.Join(names, ", ")) {
		t.Errorf(`ParseGradMode("revolve") error %v, want one naming it and the known modes`, err)
	}
}

// TestRecursiveDefaultBudget: Recursive{} keeps odeblock's default of 16
// states, the same schedule as Recursive{Budget: 16}, and more states than
// a budget of 4 (so that the budget reaches the schedule).
func TestRecursiveDefaultBudget(t *testing.T) {
	m := newNeural(Diagonal, 3)
	b := mustBrownian[float64](t, 0, 1, m.pathShape(), BrownianOptions{Seed: 5})
	run := func(g GradMode) Stats {
		tp := autograd.NewTape(engine64())
		defer tp.Release()
		ys, st, err := Solve[float64](tp, m, tp.Param(m.y0p), []float64{0, 1}, b, Options{Step: 1.0 / 40, Mode: g})
		if err != nil {
			t.Fatal(err)
		}
		if err := tp.Backward(autograd.Sum(ys[1])); err != nil {
			t.Fatal(err)
		}
		return *st
	}
	def, b16, b4 := run(Recursive{}), run(Recursive{Budget: 16}), run(Recursive{Budget: 4})
	if d := cmp.Diff(b16, def); d != "" {
		t.Errorf("Recursive{} against Recursive{Budget: 16} (-16 +default):\n%s", d)
	}
	if def.Stored > 16 || def.Stored <= b4.Stored || b4.Stored > 4 {
		t.Errorf("states kept: %d by default, %d with a budget of 4; want at most 16 and 4, the default more", def.Stored, b4.Stored)
	}
}
