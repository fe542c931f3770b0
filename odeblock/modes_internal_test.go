package odeblock

import (
	"testing"

	"github.com/adamnode/adamnode/autograd"
)

// ownAdjoint embeds an HBNODE and overrides nothing: it is an Adjointer by
// promotion, but not the package's own, so it gets spare gradient buffers.
type ownAdjoint struct{ *HBNODE[float64] }

// TestTakesNilGrads: only the package's own HBNODE and AdamNODE take a nil
// dg in EvalAdjoint; a type embedding one, and other dynamics, do not.
func TestTakesNilGrads(t *testing.T) {
	f := FieldFunc(nil, func(_ *autograd.Tape[float64], _ float64, h autograd.Var[float64]) autograd.Var[float64] { return h })
	hb := NewHBNODE[float64](f, -1)
	for _, c := range []struct {
		name string
		dyn  Dynamics[float64]
		want bool
	}{
		{"HBNODE", hb, true},
		{"AdamNODE", NewAdamNODE[float64](f, -1, 1, ScaleSqrt), true},
		{"embedding an HBNODE", ownAdjoint{hb}, false},
		{"NODE", &NODE[float64]{F: f}, false},
	} {
		if got := takesNilGrads(c.dyn); got != c.want {
			t.Errorf("%s: %t, want %t", c.name, got, c.want)
		}
	}
}

// TestStepsOnlyModes: with a method whose steps are not explicit RK stages,
// Backprop and Checkpoint run as Interpolated, Recursive as Interpolated
// with its budget (the default one for 0), Adjoint and Interpolated as
// themselves; an explicit method keeps every mode.
func TestStepsOnlyModes(t *testing.T) {
	for _, c := range []struct {
		mode, want GradMode
	}{
		{Backprop{}, Interpolated{}},
		{Checkpoint{}, Interpolated{}},
		{Recursive{}, Interpolated{Budget: DefaultBudget}},
		{Recursive{Budget: 3}, Interpolated{Budget: 3}},
		{Adjoint{Seminorm: true}, Adjoint{Seminorm: true}},
		{Interpolated{Budget: 2}, Interpolated{Budget: 2}},
	} {
		got, err := stepsOnlyMode(c.mode, Options{Method: "bdf"})
		if err != nil || got != c.want {
			t.Errorf("%v with bdf: %v, %v; want %v", c.mode, got, err, c.want)
		}
		if got, err := stepsOnlyMode(c.mode, Options{}); err != nil || got != c.mode {
			t.Errorf("%v with dopri5: %v, %v; want itself", c.mode, got, err)
		}
	}
	if _, err := stepsOnlyMode(Backprop{}, Options{Method: "nope"}); err == nil {
		t.Error("an unknown method gave no error")
	}
}
