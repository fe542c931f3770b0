package sde_test

import (
	"fmt"
	"math"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/sde"
	"github.com/adamnode/adamnode/tensor"
)

// Geometric Brownian motion dY = μY dt + σY dW for 2000 independent paths
// (one Brownian motion per element: diagonal noise), solved with Milstein's
// method and compared with the exact solution Y(1) = exp(μ − σ²/2 + σW(1))
// on the same Brownian path; then the gradient of the mean of Y(1) with
// respect to μ, by backprop through the solve (exactly, E Y(1) = e^μ).
func Example() {
	const n, mu, sigma = 2000, 0.5, 0.8
	eng := tensor.Default().Float64()
	m := autograd.NewParam("mu", tensor.FromSlice([]float64{mu}))
	gbm := sde.Funcs[float64]{
		F: func(tp *autograd.Tape[float64], t float64, y autograd.Var[float64]) autograd.Var[float64] {
			return autograd.Mul(y, tp.Param(m))
		},
		G: func(tp *autograd.Tape[float64], t float64, y autograd.Var[float64]) autograd.Var[float64] {
			return autograd.Scale(y, sigma)
		},
		Parameters: []*autograd.Param[float64]{m},
	}
	path, err := sde.NewBrownian[float64](0, 1, []int{n}, sde.BrownianOptions{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}

	tp := autograd.NewTape(eng)
	ys, st, err := sde.Solve[float64](tp, gbm, tp.Const(tensor.Full(1.0, n)), []float64{0, 1}, path,
		sde.Options{Method: sde.Milstein, Calculus: sde.Ito, Step: 1.0 / 64})
	if err != nil {
		fmt.Println(err)
		return
	}
	w, _ := path.W(0, 1)
	var meanErr float64
	for i, y := range ys[1].Value().ReadData() {
		exact := math.Exp(mu - sigma*sigma/2 + sigma*w.At(i))
		meanErr += math.Abs(y-exact) / n
	}
	fmt.Printf("%d steps, mean |error| %.4f\n", st.Steps, meanErr)

	mean := autograd.Mean(ys[1])
	if err := tp.Backward(mean); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("mean Y(1) %.2f (e^μ = %.2f), d mean/dμ %.2f\n", mean.Item(), math.Exp(mu), m.Grad.At(0))
	// Output:
	// 64 steps, mean |error| 0.0095
	// mean Y(1) 1.63 (e^μ = 1.65), d mean/dμ 1.62
}

// A Brownian path gives the same increments in any order of queries, and
// they add up.
func ExampleBrownian() {
	b, err := sde.NewBrownian[float32](0, 1, []int{3}, sde.BrownianOptions{Seed: 7})
	if err != nil {
		fmt.Println(err)
		return
	}
	late, _ := b.W(0.5, 1)
	early, _ := b.W(0, 0.5)
	whole, _ := b.W(0, 1)
	sum := tensor.Add(early, late)
	fmt.Printf("W(0, 1) = %.5f, W(0, 0.5) + W(0.5, 1) = %.5f\n", whole.At(0), sum.At(0))
	_, err = b.W(0.5, 0.25)
	fmt.Println(err)
	// Output:
	// W(0, 1) = -1.32153, W(0, 0.5) + W(0.5, 1) = -1.32153
	// sde: Brownian increment W(0.5, 0.25): interval with s > t
}

// Reversible Heun's algebraic backward gives backprop's gradients in
// memory that does not grow with the steps: here for an Ornstein–Uhlenbeck
// process dY = θ(μ − Y) dt + σ∘dW, the gradient of E Y(1) with respect to
// θ over 500 paths (exactly, (μ − y0)e^(−θ) = 1.5·e^(−1) ≈ 0.55 for the
// mean of the law).
func ExampleSolve_reversible() {
	const n = 500
	theta := autograd.NewParam("theta", tensor.FromSlice([]float64{1}))
	ou := sde.Funcs[float64]{
		F: func(tp *autograd.Tape[float64], t float64, y autograd.Var[float64]) autograd.Var[float64] {
			return autograd.Mul(autograd.RSub(2, y), tp.Param(theta)) // θ(μ − y), μ = 2
		},
		G: func(tp *autograd.Tape[float64], t float64, y autograd.Var[float64]) autograd.Var[float64] {
			return tp.Const(tensor.Full(0.3, n))
		},
		Parameters: []*autograd.Param[float64]{theta},
	}
	path, _ := sde.NewBrownian[float64](0, 1, []int{n}, sde.BrownianOptions{Seed: 3})
	for _, g := range []sde.GradMode{sde.Backprop{}, sde.Reversible{}} {
		theta.ZeroGrad()
		tp := autograd.NewTape(tensor.Default().Float64())
		ys, st, err := sde.Solve[float64](tp, ou, tp.Const(tensor.Full(0.5, n)), []float64{0, 1}, path,
			sde.Options{Method: sde.ReversibleHeun, Step: 1.0 / 100, Mode: g})
		if err != nil {
			fmt.Println(err)
			return
		}
		nodes := tp.Len()
		if err := tp.Backward(autograd.Mean(ys[1])); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%d steps, %4d tape nodes, d mean/dθ %.6f\n", st.Steps, nodes, theta.Grad.At(0))
	}
	// Output:
	// 100 steps,  401 tape nodes, d mean/dθ 0.549846
	// 100 steps,    3 tape nodes, d mean/dθ 0.549846
}
