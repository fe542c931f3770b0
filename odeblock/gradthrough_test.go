package odeblock_test

import (
	"strings"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// TestGradThroughBlock: a gradient penalty on an ODE model's input,
// ‖∂L/∂x‖² with the gradient recorded by autograd.Grad through the block,
// trains: in the modes that differentiate the discrete solve its
// parameter gradient (second derivatives through the solve) matches
// central differences, and so do third derivatives (CheckHigherOrder); in
// the others the Grad is an error naming the mode.
func TestGradThroughBlock(t *testing.T) {
	w := autograd.NewParam("w", tensor.FromSlice([]float64{0.5, -0.3, 0.2, 0.8, 0.1, -0.6, 0.3, 0.4, -0.2}, 3, 3))
	v := autograd.NewParam("v", tensor.FromSlice([]float64{0.4, 0.7, -0.5, 0.3, -0.2, 0.6}, 2, 3))
	bias := autograd.NewParam("b", tensor.FromSlice([]float64{0.1, -0.2}, 2))
	field := odeblock.FieldFunc([]*autograd.Param[float64]{w, v, bias}, func(tp *autograd.Tape[float64], tt float64, z autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Linear(autograd.LinearTimeAct(z, tt, tp.Param(w), autograd.Var[float64]{}, autograd.TanhAct), tp.Param(v), tp.Param(bias))
	})
	x0 := tensor.FromSlice([]float64{0.3, -0.4, 0.9, 0.2}, 2, 2)
	for _, c := range []struct {
		mode   odeblock.GradMode
		method string
		ok     bool
	}{
		{odeblock.Backprop{}, "dopri5", true},
		{odeblock.Checkpoint{}, "rk4", true},
		{odeblock.Recursive{Budget: 2}, "bosh3", true},
		{odeblock.Adjoint{}, "dopri5", false},
		{odeblock.Interpolated{}, "dopri5", false},
		{odeblock.Backprop{}, "implicit_adams", false}, // runs as Interpolated
	} {
		b := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Times: []float64{0, 0.5, 1}, Mode: c.mode, Solver: odeblock.Options{Method: c.method, RTol: 1e-6, ATol: 1e-6, Step: 0.1}}
		traj := false
		penalty := func(tp *autograd.Tape[float64]) (autograd.Var[float64], error) {
			x := tp.Input(x0)
			// The field's bias also shifts the initial state: its gradient
			// through z0 and through the field are separate paths.
			z0 := autograd.AddBias(x, tp.Param(bias))
			var out autograd.Var[float64]
			var err error
			if traj {
				out, err = b.Trajectory(tp, z0)
			} else {
				out, err = b.Forward(tp, z0)
			}
			if err != nil {
				return out, err
			}
			gs, err := autograd.Grad([]autograd.Var[float64]{autograd.Sum(autograd.Square(out))}, []autograd.Var[float64]{x}, autograd.GradOptions[float64]{CreateGraph: true})
			if err != nil {
				return autograd.Var[float64]{}, err
			}
			return autograd.Sum(autograd.Square(gs.Inputs[0])), nil
		}
		params := []*autograd.Param[float64]{w, v, bias}
		for _, tr := range []bool{false, true} {
			traj = tr
			_, err := autograd.CheckHigherOrder(penalty, params, 2, autograd.GradCheckOptions{AbsTol: 1e-6, RelTol: 1e-5})
			switch {
			case c.ok && err != nil:
				t.Errorf("%v %s traj=%v: %v", c.mode, c.method, tr, err)
			case !c.ok && (err == nil || !strings.Contains(err.Error(), "mode")):
				t.Errorf("%v %s traj=%v: error %v, want one naming the mode", c.mode, c.method, tr, err)
			}
		}
	}
}

// TestGradThroughFamilies: second derivatives of every family's trajectory
// through a Backprop block (the fused right-hand sides of HBNODE and
// AdamNODE differentiated through their op-by-op recordings), with
// respect to the initial state's inputs and every parameter, against
// central differences of the first.
func TestGradThroughFamilies(t *testing.T) {
	for _, f := range families(11) {
		b := &odeblock.Block[float64]{Dynamics: f.dyn, Times: []float64{0, 0.4, 1}, Mode: odeblock.Backprop{}, Solver: odeblock.Options{Method: "bosh3", Step: 0.2}}
		if _, err := autograd.CheckHigherOrder(blockFunc(t, f, b), f.params(), 2, autograd.GradCheckOptions{AbsTol: 1e-6, RelTol: 1e-5}); err != nil {
			t.Errorf("%s: %v", f.name, err)
		}
	}
}

// TestJVPInsideField: a field whose evaluation takes a forward-mode
// derivative of its own network, z' = ∂h/∂z·v with h(z) = tanh(z·W), in
// every gradient mode: its parameter gradients (second derivatives of h)
// against central differences.
func TestJVPInsideField(t *testing.T) {
	w := autograd.NewParam("w", tensor.FromSlice([]float64{0.5, -0.3, 0.2, 0.8}, 2, 2))
	v := tensor.FromSlice([]float64{1, -0.5, 0.3, 0.7}, 2, 2)
	field := odeblock.FieldFunc([]*autograd.Param[float64]{w}, func(tp *autograd.Tape[float64], _ float64, z autograd.Var[float64]) autograd.Var[float64] {
		h := func(z autograd.Var[float64]) autograd.Var[float64] {
			return autograd.Tanh(autograd.Linear(z, tp.Param(w), autograd.Var[float64]{}))
		}
		_, jv, err := autograd.JVP(h, z, tp.Const(v))
		if err != nil {
			panic(err)
		}
		return jv
	})
	x0 := tensor.FromSlice([]float64{0.3, -0.4, 0.9, 0.2}, 2, 2)
	for _, mode := range modes {
		b := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Times: []float64{0, 1}, Mode: mode, Solver: odeblock.Options{RTol: 1e-10, ATol: 1e-10}}
		f := func(tp *autograd.Tape[float64]) (autograd.Var[float64], error) {
			out, err := b.Forward(tp, tp.Const(x0))
			if err != nil {
				return out, err
			}
			return autograd.Sum(autograd.Square(out)), nil
		}
		if _, err := autograd.CheckGradients(f, []*autograd.Param[float64]{w}, autograd.GradCheckOptions{AbsTol: 1e-7, RelTol: 1e-5}); err != nil {
			t.Errorf("%v: %v", mode, err)
		}
	}
}
