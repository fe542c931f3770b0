package autograd_test

import (
	"fmt"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// ExampleGradOf writes a WGAN-GP gradient penalty with the function
// transform: GradOf(critic, x) is torch.func.grad, its result recorded on
// x's tape so that Backward differentiates the penalty through it.
func ExampleGradOf() {
	w := autograd.NewParam("w", tensor.FromSlice([]float64{0.5, -1}, 1, 2))
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	critic := func(x autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Sum(autograd.Tanh(autograd.Linear(x, tp.Param(w), autograd.Var[float64]{})))
	}
	x := tp.Const(tensor.FromSlice([]float64{0.1, 0.2, -0.3, 0.4}, 2, 2))
	g, err := autograd.GradOf(critic, x)
	if err != nil {
		panic(err)
	}
	norm := autograd.Sqrt(autograd.SumAxis(autograd.Square(g), 1, false))
	penalty := autograd.Mean(autograd.Square(autograd.AddConst(norm, -1)))
	if err := tp.Backward(penalty); err != nil {
		panic(err)
	}
	fmt.Printf("∂D/∂x: %.4f\n", g.Value().Data())
	fmt.Printf("penalty %.4f, ∂penalty/∂w: %.4f\n", penalty.Item(), w.Grad.Data())
	// Output:
	// ∂D/∂x: [0.4889 -0.9778 0.3747 -0.7495]
	// penalty 0.0175, ∂penalty/∂w: [0.0303 -0.0212]
}

// ExampleValueAndGrad takes f(x) = Σ x² and its gradient 2x in one
// evaluation, as jax.value_and_grad, here in no-grad mode (an evaluation
// or a rollout): the transform records f with gradients on all the same.
func ExampleValueAndGrad() {
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	tp.SetNoGrad(true)
	x := tp.Const(tensor.FromSlice([]float64{1, -2, 3}))
	y, g, err := autograd.ValueAndGrad(func(x autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Sum(autograd.Square(x))
	}, x)
	if err != nil {
		panic(err)
	}
	fmt.Println(y.Item(), g.Value().Data())
	// Output:
	// 14 [2 -4 6]
}

// ExampleVJPOf computes RNODE's Jacobian regulariser's probe εᵀ·∂f/∂z for
// f(z) = tanh(z) (∂f/∂z = diag(1 − tanh²z)), and composes transforms: the
// gradient of ‖εᵀ·∂f/∂z‖² with respect to z is a second derivative.
func ExampleVJPOf() {
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	f := func(z autograd.Var[float64]) autograd.Var[float64] { return autograd.Tanh(z) }
	eps := tp.Const(tensor.FromSlice([]float64{1, -1}))
	z := tp.Const(tensor.FromSlice([]float64{0.5, 1}))
	_, vjp, err := autograd.VJPOf(f, z, eps)
	if err != nil {
		panic(err)
	}
	fmt.Printf("εᵀ·∂f/∂z: %.4f\n", vjp.Value().Data())
	g, err := autograd.GradOf(func(z autograd.Var[float64]) autograd.Var[float64] {
		_, v, err := autograd.VJPOf(f, z, eps)
		if err != nil {
			panic(err)
		}
		return autograd.Sum(autograd.Square(v))
	}, z)
	if err != nil {
		panic(err)
	}
	fmt.Printf("∂‖εᵀ·∂f/∂z‖²/∂z: %.4f\n", g.Value().Data())
	// Output:
	// εᵀ·∂f/∂z: [0.7864 -0.4200]
	// ∂‖εᵀ·∂f/∂z‖²/∂z: [-1.1433 -0.5373]
}
