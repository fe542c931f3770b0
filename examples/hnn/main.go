// Program hnn trains a Hamiltonian neural network (Greydanus et al. 2019)
// through an ODE solve: a learned energy H(q, p), an MLP 2 → 64 → 64 → 1
// with tanh, defines the field q' = ∂H/∂p, p' = −∂H/∂q, whose trajectories
// from a batch of initial states are fitted to a pendulum's by the mean
// squared error. The gradient ∇H is taken inside the field with
// autograd.GradOf (torch.autograd.grad with create_graph=True), and the
// field returns its error (odeblock.FieldFuncErr) instead of panicking;
// the parameters' gradient comes from the adjoint (odeint_adjoint), whose
// backward solve differentiates ∇H again.
//
//	go run ./examples/hnn
//
// The data: the pendulum H = 6(1 − cos q) + p²/2 (Greydanus et al.'s: m = l
// = 1, g = 3), 640 trajectories from initial states at a radius in
// [1.3, 2.3] of the origin of the (q, p) plane, observed at 11 times on
// [0, 1] (dopri5 at 1e-10), 512 for training and 128 held out. Training:
// Adam (PyTorch's defaults, lr 1e-3), batches of 128 trajectories, dopri5
// at rtol = atol = 1e-6, float64.
//
// Each iteration records on a fresh tape, as PyTorch builds a fresh graph:
// the solves run on the block's own tapes, and reusing one tape
// (Tape.Reset) measured no faster here.
//
// The model and its training loop — newHNN and train, between the
// "lines:" markers — are what bench/count_lines.py counts against the same
// model in PyTorch, bench/torch_hnn.py, which bench/compare_models.sh
// checks against this one on identical weights and times beside it.
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
)

// lines: begin
func newHNN(rng *rand.Rand, ts []float64) *odeblock.Block[float64] {
	H := layers.NewSequential[float64](layers.NewLinear[float64](rng, 2, 64), layers.Tanh[float64]{}, layers.NewLinear[float64](rng, 64, 64), layers.Tanh[float64]{}, layers.NewLinear[float64](rng, 64, 1))
	field := odeblock.FieldFuncErr(H.Params(), func(tp *ag.Tape[float64], _ float64, x ag.Var[float64]) (ag.Var[float64], error) {
		dH, err := ag.GradOf(func(x ag.Var[float64]) ag.Var[float64] { return ag.Sum(H.Forward(tp, x)) }, x)
		if err != nil {
			return dH, err
		}
		return ag.Concat(1, ag.Narrow(dH, 1, 1, 1), ag.Neg(ag.Narrow(dH, 1, 0, 1))), nil // q' = ∂H/∂p, p' = −∂H/∂q
	})
	return &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Times: ts, Solver: odeblock.Options{RTol: 1e-6, ATol: 1e-6}}
}

func train(block *odeblock.Block[float64], x0, xs *tensor.Tensor[float64], iters, batch int, rng *rand.Rand) ([]float64, error) {
	opt := optim.NewAdam(block.Params(), optim.AdamDefaults())
	var losses []float64
	for range iters {
		tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
		idx := rng.Perm(x0.Dim(0))[:batch]
		pred := tp.Check(block.Trajectory(tp, ag.IndexSelect(tp.Const(x0), 0, idx)))
		loss := ag.MSE(pred, ag.IndexSelect(tp.Const(xs), 1, idx))
		if err := optim.Minimize(opt, tp, loss); err != nil {
			return losses, err
		}
		losses = append(losses, loss.Item())
	}
	return losses, nil
}

// lines: end

// config is one run (the flags).
type config struct {
	Train, Test  int // trajectories
	Iters, Batch int
	Seed         uint64
	Log          io.Writer
}

func defaults() config {
	return config{Train: 512, Test: 128, Iters: 300, Batch: 128, Seed: 1, Log: os.Stdout}
}

// times are the observation times: 11 on [0, 1].
func times() []float64 {
	ts := make([]float64, 11)
	for i := range ts {
		ts[i] = float64(i) / 10
	}
	return ts
}

// pendulum returns n initial states x0 [n, 2] and the pendulum's
// trajectories from them at ts, xs [len(ts), n, 2].
func pendulum(rng *rand.Rand, n int, ts []float64) (x0, xs *tensor.Tensor[float64], err error) {
	y0 := make([]float64, 2*n)
	for i := range n {
		r, a := 1.3+rng.Float64(), 2*math.Pi*rng.Float64()
		y0[2*i], y0[2*i+1] = r*math.Cos(a), r*math.Sin(a)
	}
	f := func(_ float64, y, dy []float64) error {
		for i := 0; i < len(y); i += 2 {
			dy[i], dy[i+1] = y[i+1], -6*math.Sin(y[i])
		}
		return nil
	}
	ys, _, err := odeblock.Solve(f, y0, ts, odeblock.Options{RTol: 1e-10, ATol: 1e-10})
	if err != nil {
		return nil, nil, err
	}
	xs = tensor.New[float64](len(ts), n, 2)
	for k, y := range ys {
		copy(xs.Data()[k*2*n:], y)
	}
	return tensor.FromSlice(y0, n, 2), xs, nil
}

// result is what a run reports.
type result struct {
	Losses                []float64 // per iteration
	TestBefore, TestAfter float64   // the held-out trajectories' MSE
}

// run generates the data, trains and evaluates.
func run(c config) (result, error) {
	var r result
	rng := rand.New(rand.NewPCG(c.Seed, 0x4a11))
	ts := times()
	x0, xs, err := pendulum(rng, c.Train+c.Test, ts)
	if err != nil {
		return r, err
	}
	trainIdx, testIdx := seq(0, c.Train), seq(c.Train, c.Train+c.Test)
	x0tr, xstr := rows(x0, 0, trainIdx), rows(xs, 1, trainIdx)
	x0te, xste := rows(x0, 0, testIdx), rows(xs, 1, testIdx)
	block := newHNN(rng, ts)
	if r.TestBefore, err = testMSE(block, x0te, xste); err != nil {
		return r, err
	}
	if r.Losses, err = train(block, x0tr, xstr, c.Iters, c.Batch, rng); err != nil {
		return r, err
	}
	if r.TestAfter, err = testMSE(block, x0te, xste); err != nil {
		return r, err
	}
	fmt.Fprintf(c.Log, "%d iterations: training loss %.4g → %.4g; held-out MSE %.4g → %.4g\n",
		c.Iters, r.Losses[0], r.Losses[len(r.Losses)-1], r.TestBefore, r.TestAfter)
	return r, nil
}

// testMSE is the mean squared error of the model's trajectories from x0
// against xs, solved without gradients.
func testMSE(block *odeblock.Block[float64], x0, xs *tensor.Tensor[float64]) (float64, error) {
	tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
	tp.SetNoGrad(true)
	pred, err := block.Trajectory(tp, tp.Const(x0))
	if err != nil {
		return 0, err
	}
	return ag.MSE(pred, tp.Const(xs)).Item(), nil
}

// rows returns x's slabs idx along axis, as a tensor.
func rows(x *tensor.Tensor[float64], axis int, idx []int) *tensor.Tensor[float64] {
	tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
	return ag.IndexSelect(tp.Const(x), axis, idx).Value().Clone()
}

func seq(lo, hi int) []int {
	s := make([]int, hi-lo)
	for i := range s {
		s[i] = lo + i
	}
	return s
}

func main() {
	c := defaults()
	flag.IntVar(&c.Iters, "iters", c.Iters, "training iterations")
	flag.IntVar(&c.Batch, "batch", c.Batch, "trajectories per iteration")
	flag.Uint64Var(&c.Seed, "seed", c.Seed, "random seed")
	flag.Parse()
	if _, err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "hnn:", err)
		os.Exit(1)
	}
}
