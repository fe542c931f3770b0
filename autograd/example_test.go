package autograd_test

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// Regressor is a user-defined model: y = w2·tanh(w1·x + b1), written once
// for any element type so that it trains in float32 and is checked in
// float64.
type Regressor[T tensor.Float] struct {
	W1, B1, W2 *autograd.Param[T]
}

func NewRegressor[T tensor.Float](rng *rand.Rand, in, hidden int) *Regressor[T] {
	return &Regressor[T]{
		W1: autograd.NewParam("W1", tensor.RandN[T](rng, 0, 0.5, hidden, in)),
		B1: autograd.NewParam("B1", tensor.Full[T](0.1, hidden)),
		W2: autograd.NewParam("W2", tensor.RandN[T](rng, 0, 0.5, 1, hidden)),
	}
}

func (m *Regressor[T]) Params() []*autograd.Param[T] {
	return []*autograd.Param[T]{m.W1, m.B1, m.W2}
}

func (m *Regressor[T]) Loss(tp *autograd.Tape[T], x, y *tensor.Tensor[T]) autograd.Var[T] {
	h := autograd.Tanh(autograd.Linear(tp.Const(x), tp.Param(m.W1), tp.Param(m.B1)))
	pred := autograd.Linear(h, tp.Param(m.W2), autograd.Var[T]{})
	return autograd.MSE(pred, tp.Const(y))
}

// ExampleCheckGradients checks a user-defined model's gradients against
// central differences, as a test in the user's package would.
func ExampleCheckGradients() {
	rng := rand.New(rand.NewPCG(1, 2))
	model := NewRegressor[float64](rng, 3, 5)
	x := tensor.RandN[float64](rng, 0, 1, 8, 3)
	y := tensor.RandN[float64](rng, 0, 1, 8, 1)

	report, err := autograd.CheckGradients(func(tp *autograd.Tape[float64]) autograd.Var[float64] {
		return model.Loss(tp, x, y)
	}, model.Params(), autograd.GradCheckOptions{})
	if err != nil {
		fmt.Println(err) // in a test: t.Fatal(err)
		return
	}
	fmt.Printf("%d elements checked, %d beyond tolerance\n", report.Checked, report.Failed)
	// Output: 25 elements checked, 0 beyond tolerance
}

// ExampleCustom records a node with a hand-written derivative:
// y = x³ with ∂y/∂x = 3x².
func ExampleCustom() {
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	x := tp.Input(tensor.FromSlice([]float64{1, 2, 3}))

	xv := x.Value()
	y := tensor.New[float64](3)
	y.Map(xv, func(v float64) float64 { return v * v * v })
	cube := autograd.Custom("cube", y, func(gy *tensor.Tensor[float64]) ([]*tensor.Tensor[float64], error) {
		gx := tensor.New[float64](3)
		for i, g := range gy.Data() {
			gx.Data()[i] = g * 3 * xv.Data()[i] * xv.Data()[i]
		}
		return []*tensor.Tensor[float64]{gx}, nil
	}, x)

	tp.Backward(autograd.Sum(cube))
	fmt.Println(x.Grad().Data())
	// Output: [3 12 27]
}

// ExamplePullback_VJP pulls a cotangent back through f(x) = tanh(W·x) at a
// point, sending the parameter's gradient to a caller-owned tensor, as an
// adjoint ODE solve does at each backward step.
func ExamplePullback_VJP() {
	eng := tensor.EngineFor[float64](tensor.Default())
	w := autograd.NewParam("W", tensor.FromSlice([]float64{0.5, -1, 2, 0.25}, 2, 2))
	f := func(tp *autograd.Tape[float64], in []autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Tanh(autograd.Linear(in[0], tp.Param(w), autograd.Var[float64]{}))
	}
	x := tensor.FromSlice([]float64{0, 0}, 1, 2) // tanh' = 1 at 0
	cot := tensor.FromSlice([]float64{1, 1}, 1, 2)

	dx, dw := tensor.New[float64](1, 2), tensor.New[float64](2, 2)
	pb := autograd.NewPullback(eng)
	pb.MustVJP(f, []*tensor.Tensor[float64]{x}, cot, autograd.VJPDest[float64]{
		Inputs:     []*tensor.Tensor[float64]{dx},
		Params:     []*autograd.Param[float64]{w},
		ParamGrads: []*tensor.Tensor[float64]{dw},
	})
	fmt.Println("dx:", dx.Data()) // cotᵀ·W
	fmt.Println("dW:", dw.Data()) // cot·xᵀ = 0 at x = 0
	fmt.Println("W.Grad:", w.Grad.Data())
	// Output:
	// dx: [2.5 -0.75]
	// dW: [0 0 0 0]
	// W.Grad: [0 0 0 0]
}

// Training steps on one reused tape: record the forward pass, Backward into
// every Param.Grad, step, zero the gradients, Reset for the next pass.
func Example() {
	rng := rand.New(rand.NewPCG(1, 2))
	m := NewRegressor[float32](rng, 2, 8)
	x := tensor.RandN[float32](rng, 0, 1, 64, 2)
	y := tensor.New[float32](64, 1)
	for i := range 64 { // the target: x0·x1
		y.Data()[i] = x.Data()[2*i] * x.Data()[2*i+1]
	}
	tp := autograd.NewTape(tensor.EngineFor[float32](tensor.Default()))
	for step := range 301 {
		tp.Reset()
		loss := m.Loss(tp, x, y)
		if err := tp.Backward(loss); err != nil { // a Custom node's backward may fail
			panic(err)
		}
		if step%300 == 0 {
			fmt.Printf("step %d: loss %.2f\n", step, loss.Item())
		}
		for _, p := range m.Params() { // plain gradient descent
			p.Value.Axpy(-0.2, p.Grad)
		}
		autograd.ZeroGrads(m.Params())
	}
	// Output:
	// step 0: loss 0.82
	// step 300: loss 0.01
}

// ExampleTape_Check checks a pass's errors once: a step that fails returns
// NaNs of its result's shape with its error, Check remembers the error,
// and Backward returns it without touching a gradient.
func ExampleTape_Check() {
	w := autograd.NewParam("w", tensor.FromSlice([]float64{1, 2}, 2))
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	// step stands for any call returning a Var and an error (an ODE
	// block's Forward, GradOf): here one that fails.
	step := func(x autograd.Var[float64]) (autograd.Var[float64], error) {
		return tp.NaNs(x.Shape()...), errors.New("step size underflow at t=0.7")
	}
	z := tp.Check(step(tp.Param(w)))
	loss := autograd.Sum(autograd.Square(z))
	fmt.Println("loss:", loss.Item())
	fmt.Println("Backward:", tp.Backward(loss))
	fmt.Println("gradient:", w.Grad.Data())
	// Output:
	// loss: NaN
	// Backward: step size underflow at t=0.7
	// gradient: [0 0]
}
