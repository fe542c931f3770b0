package odeblock_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// Solve integrates y' = −y with dopri5 and reports the work it did.
func ExampleSolve() {
	decay := func(t float64, y, dy []float64) error {
		dy[0] = -y[0]
		return nil
	}
	ys, st, err := odeblock.Solve(decay, []float64{1}, []float64{0, 1, 2}, odeblock.Options{RTol: 1e-8, ATol: 1e-8})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("y(1) = %.6f (e⁻¹ = %.6f), y(2) = %.6f\n", ys[1][0], math.Exp(-1), ys[2][0])
	fmt.Println(st.NFE == 2+6*(st.Accepted+st.Rejected))
	// Output:
	// y(1) = 0.367879 (e⁻¹ = 0.367879), y(2) = 0.135335
	// true
}

// An AdamNODE block with a one-layer field, differentiated by the
// checkpointed mode; switching Mode to odeblock.Adjoint{} or
// odeblock.Backprop{} changes nothing else.
func ExampleBlock() {
	w := autograd.NewParam("f.w", tensor.FromSlice([]float64{-0.5, 0.2, 0.1, -0.3}, 2, 2))
	field := odeblock.FieldFunc([]*autograd.Param[float64]{w}, func(tp *autograd.Tape[float64], t float64, h autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Tanh(autograd.MatMul(h, tp.Param(w)))
	})
	dyn := odeblock.NewAdamNODE[float64](field, -1, 1, odeblock.ScaleSoftplus)
	block := &odeblock.Block[float64]{Dynamics: dyn, Mode: odeblock.Checkpoint{}, Solver: odeblock.Options{RTol: 1e-6, ATol: 1e-6}}

	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	h0 := tp.Const(tensor.FromSlice([]float64{1, 0}, 1, 2))
	m0 := tp.Const(tensor.FromSlice([]float64{0.5, -0.5}, 1, 2))
	z, err := block.Forward(tp, odeblock.AdamInitialState(h0, m0))
	if err != nil {
		fmt.Println(err)
		return
	}
	loss := autograd.Sum(autograd.Square(odeblock.Part(z, 0, 3))) // ‖h(1)‖²
	if err := tp.Backward(loss); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(z.Shape(), w.Grad.Shape(), dyn.R1.Grad.Len())
	// Output:
	// [3 2] [2 2] 1
}

// Van der Pol with μ = 1000, stiff: bdf solves it over [0, 3000] in a few
// thousand evaluations of f, where dopri5 runs out of its 10,000 steps.
func ExampleSolve_stiff() {
	const mu = 1000
	vdp := func(_ float64, y, dy []float64) error {
		dy[0], dy[1] = y[1], mu*(1-y[0]*y[0])*y[1]-y[0]
		return nil
	}
	ys, st, err := odeblock.Solve(vdp, []float64{2, 0}, []float64{0, 3000}, odeblock.Options{Method: "bdf", RTol: 1e-6, ATol: 1e-6})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("y(3000) = %.2f, fewer than 5000 evaluations: %v\n", ys[1][0], st.NFE < 5000)
	_, _, err = odeblock.Solve(vdp, []float64{2, 0}, []float64{0, 3000}, odeblock.Options{RTol: 1e-6, ATol: 1e-6})
	fmt.Println(errors.Is(err, odeblock.ErrMaxSteps))
	// Output:
	// y(3000) = -1.51, fewer than 5000 evaluations: true
	// true
}

// A NODE whose MLP field runs on shards of the batch: with two workers,
// f sees two shards of 256 rows, each on a tape of its own, and the loss
// and gradients are the plain field's to rounding. ShardedField(f, 0)
// would leave a field this small whole; 2 asks for two shards.
func ExampleShardedField() {
	rng := rand.New(rand.NewPCG(1, 2))
	mlp := layers.NewSequential[float64](layers.TimeConcat[float64]{},
		layers.NewLinear[float64](rng, 5, 32), layers.Tanh[float64]{}, layers.NewLinear[float64](rng, 32, 4))
	var rows atomic.Int64 // the rows of f's last call (f is called from two goroutines at once)
	field := odeblock.FieldFunc(mlp.Params(), func(tp *autograd.Tape[float64], t float64, h autograd.Var[float64]) autograd.Var[float64] {
		rows.Store(int64(h.Shape()[0]))
		return mlp.ForwardT(tp, t, h)
	})
	h0 := tensor.RandN[float64](rng, 0, 1, 512, 4)
	loss := func(f odeblock.Field[float64]) float64 {
		block := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: f}, Mode: odeblock.Adjoint{}}
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Gonum(2)))
		z, err := block.Forward(tp, tp.Const(h0))
		if err != nil {
			panic(err)
		}
		l := autograd.Mean(autograd.Square(z))
		if err := tp.Backward(l); err != nil {
			panic(err)
		}
		return l.Item()
	}
	plain := loss(field)
	sharded := loss(odeblock.ShardedField(field, 2))
	fmt.Printf("rows a call: %d, losses equal to 1e-12: %v\n", rows.Load(), math.Abs(plain-sharded) < 1e-12)
	// Output:
	// rows a call: 256, losses equal to 1e-12: true
}

// ExampleBlock_shards solves an AdamNODE's batch of 512 as two ODEs at
// once, one per worker, each with its own steps: f sees shards of 256 rows
// of h, and the loss agrees with one solve of the whole batch to the
// solver's tolerance (not to rounding: the step sizes differ).
func ExampleBlock_shards() {
	rng := rand.New(rand.NewPCG(3, 4))
	mlp := layers.NewSequential[float64](layers.TimeConcat[float64]{},
		layers.NewLinear[float64](rng, 5, 32), layers.Tanh[float64]{}, layers.NewLinear[float64](rng, 32, 4))
	var rows atomic.Int64
	field := odeblock.FieldFunc(mlp.Params(), func(tp *autograd.Tape[float64], t float64, h autograd.Var[float64]) autograd.Var[float64] {
		rows.Store(int64(h.Shape()[0]))
		return mlp.ForwardT(tp, t, h)
	})
	dyn := odeblock.NewAdamNODE[float64](field, -1, 1, odeblock.ScaleSoftplus)
	h0 := tensor.RandN[float64](rng, 0, 1, 512, 4)
	m0 := tensor.RandN[float64](rng, 0, 0.5, 512, 4)
	loss := func(shards int) float64 {
		block := &odeblock.Block[float64]{Dynamics: dyn, Shards: shards,
			Solver: odeblock.Options{RTol: 1e-9, ATol: 1e-9}}
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Gonum(2)))
		z, err := block.Forward(tp, odeblock.AdamInitialState(tp.Const(h0), tp.Const(m0)))
		if err != nil {
			panic(err)
		}
		l := autograd.Mean(autograd.Square(odeblock.Part(z, 0, 3)))
		if err := tp.Backward(l); err != nil {
			panic(err)
		}
		return l.Item()
	}
	whole := loss(0)
	sharded := loss(2)
	fmt.Printf("rows a call: %d, losses equal to 1e-8: %v\n", rows.Load(), math.Abs(whole-sharded) < 1e-8*math.Abs(whole))
	// Output:
	// rows a call: 256, losses equal to 1e-8: true
}
