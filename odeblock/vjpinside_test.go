package odeblock_test

import (
	"errors"
	"math"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// TestVJPInsideDynamics: dynamics that compute tr(∂f/∂z) with VJPs of f at
// the state, as a continuous normalizing flow written by a PyTorch user
// does — z' = f(z) = tanh(z·W), ℓ' = −tr(∂f/∂z) — evaluate correctly
// without gradients, and with gradients fail with ErrVJPOfRecorded in
// every mode (from Forward or from Backward), never returning a gradient
// that misses the trace's dependence on W. (The trace entered the tape as
// a constant: CheckGradients flagged every element, and training moved the
// log-likelihood the wrong way.)
func TestVJPInsideDynamics(t *testing.T) {
	w := autograd.NewParam("w", tensor.FromSlice([]float64{0.5, -0.3, 0.2, 0.8}, 2, 2))
	f := func(tp *autograd.Tape[float64], in []autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Tanh(autograd.Linear(in[0], tp.Param(w), autograd.Var[float64]{}))
	}
	pb := autograd.NewPullback(tensor.EngineFor[float64](tensor.Default()))
	field := odeblock.FieldFunc([]*autograd.Param[float64]{w}, func(tp *autograd.Tape[float64], _ float64, s autograd.Var[float64]) autograd.Var[float64] {
		z := autograd.Narrow(s, 1, 0, 2)
		dz := f(tp, []autograd.Var[float64]{z})
		var tr float64
		for i := range 2 {
			e := tensor.New[float64](1, 2)
			e.Data()[i] = 1
			row := tensor.New[float64](1, 2)
			pb.VJP(f, []*tensor.Tensor[float64]{z.Value()}, e, autograd.VJPDest[float64]{Inputs: []*tensor.Tensor[float64]{row}}) // error ignored, as a careless user would
			tr += row.Data()[i]
		}
		return autograd.Concat(1, dz, tp.Const(tensor.FromSlice([]float64{-tr}, 1, 1)))
	})
	s0 := tensor.FromSlice([]float64{0.3, -0.4, 0}, 1, 3)
	for _, mode := range modes {
		b := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Times: []float64{0, 1}, Mode: mode, Solver: odeblock.Options{RTol: 1e-9, ATol: 1e-9}}
		// Without gradients: the log-density change of the exact flow,
		// against a fine Euler solve of the same system by hand.
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
		tp.SetNoGrad(true)
		out, err := b.Forward(tp, tp.Const(s0))
		if err != nil {
			t.Fatalf("%v, no grad: %v", mode, err)
		}
		want := eulerCNF(w.Value.Data(), s0.Data(), 20000)
		if got := out.Value().Data()[2]; math.Abs(got-want) > 1e-4 {
			t.Errorf("%v, no grad: log-density change %v, want %v", mode, got, want)
		}
		// With gradients: an error, in Forward or in Backward.
		tp = autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
		w.ZeroGrad()
		out, err = b.Forward(tp, tp.Input(s0))
		if err == nil {
			err = tp.Backward(autograd.Sum(out))
		}
		if !errors.Is(err, autograd.ErrVJPOfRecorded) {
			t.Errorf("%v: got %v, want ErrVJPOfRecorded", mode, err)
		}
	}
}

// eulerCNF solves z' = tanh(z·Wᵀ), ℓ' = −Σ_i (1 − tanh²)_i·W_ii over [0, 1]
// by Euler with n steps and returns ℓ(1).
func eulerCNF(w, s0 []float64, n int) float64 {
	z0, z1, l := s0[0], s0[1], s0[2]
	h := 1 / float64(n)
	for range n {
		a0, a1 := math.Tanh(z0*w[0]+z1*w[1]), math.Tanh(z0*w[2]+z1*w[3])
		tr := (1-a0*a0)*w[0] + (1-a1*a1)*w[3]
		z0, z1, l = z0+h*a0, z1+h*a1, l-h*tr
	}
	return l
}
