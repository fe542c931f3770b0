package odeblock_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
)

// ExampleFieldFuncErr trains a Hamiltonian neural network (Greydanus et al.
// 2019) with the adjoint: the field is J·∇H of a learned energy H, its
// gradient taken inside the field with autograd.GradOf, whose error the
// field returns (FieldFuncErr) instead of panicking. The data are a
// harmonic oscillator's half-second flow, a rotation of (q, p).
func ExampleFieldFuncErr() {
	rng := rand.New(rand.NewPCG(1, 2))
	w1 := autograd.NewParam("w1", tensor.RandN[float64](rng, 0, 0.5, 16, 2))
	b1 := autograd.NewParam("b1", tensor.New[float64](16))
	w2 := autograd.NewParam("w2", tensor.RandN[float64](rng, 0, 0.5, 1, 16))
	params := []*autograd.Param[float64]{w1, b1, w2}
	field := odeblock.FieldFuncErr(params, func(tp *autograd.Tape[float64], _ float64, z autograd.Var[float64]) (autograd.Var[float64], error) {
		energy := func(z autograd.Var[float64]) autograd.Var[float64] {
			h := autograd.Tanh(autograd.Linear(z, tp.Param(w1), tp.Param(b1)))
			return autograd.Sum(autograd.Linear(h, tp.Param(w2), autograd.Var[float64]{}))
		}
		dH, err := autograd.GradOf(energy, z)
		if err != nil {
			return autograd.Var[float64]{}, err
		}
		dq, dp := autograd.Narrow(dH, 1, 0, 1), autograd.Narrow(dH, 1, 1, 1)
		return autograd.Concat(1, dp, autograd.Neg(dq)), nil // q' = ∂H/∂p, p' = −∂H/∂q
	})
	block := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Times: []float64{0, 0.5}} // Adjoint, dopri5

	z0 := tensor.RandN[float64](rng, 0, 1, 8, 2)
	target := tensor.New[float64](8, 2)
	c, s := math.Cos(0.5), math.Sin(0.5)
	for n := range 8 {
		q, p := z0.At(n, 0), z0.At(n, 1)
		target.Set(q*c+p*s, n, 0)
		target.Set(p*c-q*s, n, 1)
	}
	opt := optim.NewAdam(params, optim.AdamDefaults().WithLR(1e-2))
	var first, last float64
	for step := range 150 {
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
		z1, err := block.Forward(tp, tp.Const(z0))
		if err != nil {
			panic(err)
		}
		loss := autograd.Mean(autograd.Square(autograd.Sub(z1, tp.Const(target))))
		if err := tp.Backward(loss); err != nil {
			panic(err)
		}
		opt.Step()
		autograd.ZeroGrads(params)
		if step == 0 {
			first = loss.Item()
		}
		last = loss.Item()
	}
	fmt.Printf("the loss fell below a tenth of its first value: %v\n", last < first/10)
	// Output:
	// the loss fell below a tenth of its first value: true
}
