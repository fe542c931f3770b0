package autograd_test

import (
	"fmt"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// ExampleGrad adds a WGAN-GP gradient penalty, meanₙ(‖∂D/∂xₙ‖ − 1)², to a
// critic's loss: Grad with CreateGraph records ∂D/∂x as ops, so that
// Backward differentiates the penalty with respect to the critic's
// parameters through it.
func ExampleGrad() {
	eng := tensor.EngineFor[float64](tensor.Default())
	w1 := autograd.NewParam("W1", tensor.FromSlice([]float64{0.5, -1, 1.5, 0.25, -0.5, 1}, 3, 2))
	w2 := autograd.NewParam("W2", tensor.FromSlice([]float64{1, -2, 0.5}, 1, 3))
	critic := func(tp *autograd.Tape[float64], x autograd.Var[float64]) autograd.Var[float64] {
		h := autograd.Tanh(autograd.Linear(x, tp.Param(w1), autograd.Var[float64]{}))
		return autograd.Linear(h, tp.Param(w2), autograd.Var[float64]{})
	}

	tp := autograd.NewTape(eng)
	// Points between real and generated samples, in a WGAN-GP.
	x := tp.Input(tensor.FromSlice([]float64{0.1, 0.2, -0.3, 0.4}, 2, 2))
	d := critic(tp, x)
	gs, err := autograd.Grad([]autograd.Var[float64]{autograd.Sum(d)}, []autograd.Var[float64]{x},
		autograd.GradOptions[float64]{CreateGraph: true})
	if err != nil {
		panic(err)
	}
	norm := autograd.Sqrt(autograd.SumAxis(autograd.Square(gs.Inputs[0]), 1, false))
	penalty := autograd.Mean(autograd.Square(autograd.AddConst(norm, -1)))
	fmt.Printf("‖∂D/∂x‖: %.4f\n", norm.Value().Data())
	fmt.Printf("penalty: %.4f\n", penalty.Item())

	// The critic's loss would be mean(D(fake)) − mean(D(real)) + λ·penalty;
	// here the penalty alone.
	if err := tp.Backward(penalty); err != nil {
		panic(err)
	}
	fmt.Printf("∂penalty/∂W2: %.4f\n", w2.Grad.Data())
	// Output:
	// ‖∂D/∂x‖: [2.8111 2.6050]
	// penalty: 2.9281
	// ∂penalty/∂W2: [-0.4136 -4.7396 0.4136]
}

// ExampleHVP computes the gradient and a Hessian-vector product of
// f(x) = x₀²·x₁ at x = (3, 2): ∇f = (2x₀x₁, x₀²) and
// H = [[2x₁, 2x₀], [2x₀, 0]], so H·(1, 0) = (2x₁, 2x₀).
func ExampleHVP() {
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	f := func(x autograd.Var[float64]) autograd.Var[float64] {
		x0, x1 := autograd.Narrow(x, 0, 0, 1), autograd.Narrow(x, 0, 1, 1)
		return autograd.Sum(autograd.Mul(autograd.Square(x0), x1))
	}
	x := tp.Const(tensor.FromSlice([]float64{3, 2}))
	v := tp.Const(tensor.FromSlice([]float64{1, 0}))
	g, hv, err := autograd.HVP(f, x, v)
	if err != nil {
		panic(err)
	}
	fmt.Println("∇f:", g.Value().Data())
	fmt.Println("H·v:", hv.Value().Data())
	// Output:
	// ∇f: [12 9]
	// H·v: [4 6]
}

// ExampleJVP pushes a tangent forward through f(x) = tanh(x·Wᵀ): at x = 0,
// where tanh' = 1, J·v is v·Wᵀ.
func ExampleJVP() {
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	w := autograd.NewParam("W", tensor.FromSlice([]float64{1, 2, -1, 0.5, 3, 0}, 3, 2))
	f := func(x autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Tanh(autograd.Linear(x, tp.Param(w), autograd.Var[float64]{}))
	}
	x := tp.Const(tensor.New[float64](1, 2))
	v := tp.Const(tensor.FromSlice([]float64{1, -1}, 1, 2))
	y, jv, err := autograd.JVP(f, x, v)
	if err != nil {
		panic(err)
	}
	fmt.Println("y:", y.Value().Data())
	fmt.Println("J·v:", jv.Value().Data())
	// Output:
	// y: [0 0 0]
	// J·v: [-1 -1.5 3]
}

// ExampleTraceExact computes the divergence of a continuous normalizing
// flow's field, the trace of ∂f/∂z for each row of a batch: for
// f(z) = tanh(z·Wᵀ) it is Σᵢ (1 − f(z)ᵢ²)·Wᵢᵢ: tr W = 0.5 at z = 0.
func ExampleTraceExact() {
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	w := autograd.NewParam("W", tensor.FromSlice([]float64{1, 0.5, -2, -0.5}, 2, 2))
	f := func(z autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Tanh(autograd.Linear(z, tp.Param(w), autograd.Var[float64]{}))
	}
	z := tp.Const(tensor.FromSlice([]float64{0, 0, 0.5, -0.2}, 2, 2))
	_, tr, err := autograd.TraceExact(f, z)
	if err != nil {
		panic(err)
	}
	fmt.Printf("tr ∂f/∂z per row: %.4f\n", tr.Value().Data())
	// Output:
	// tr ∂f/∂z per row: [0.5000 0.6122]
}
