// Program cnf trains a continuous normalizing flow (Chen et al. 2018,
// Grathwohl et al. 2019) written out by hand rather than with
// odeblock.CNF: the state is [z, ℓ] with z' = f(t, z) and ℓ' = tr(∂f/∂z),
// the exact trace taken inside the field by autograd.TraceExact (one
// reverse pass per dimension, as FFJORD's divergence_bf), so that
// log p(x) = log N(z(1); 0, I) + ℓ(1) for the solve from [x, 0] at t = 0.
// The field f is an MLP [z, t] → 64 → 64 → 2 with tanh; the likelihood is
// maximised with Adam (PyTorch's defaults, lr 1e-3) on two moons, batches
// of 256, the gradient from the adjoint (odeint_adjoint), whose backward
// solve differentiates the trace again; dopri5 at rtol = atol = 1e-5,
// float64.
//
//	go run ./examples/cnf
//
// It reports the training loss (−mean log p of the batch) as it falls and
// the mean log-likelihood of held-out points before and after.
//
// Each iteration records on a fresh tape, as PyTorch builds a fresh graph:
// the solves run on the block's own tapes, and reusing one tape
// (Tape.Reset) measured no faster here.
//
// The model and its training loop — newCNF and train, between the "lines:"
// markers — are what bench/count_lines.py counts against the same model
// in PyTorch, bench/torch_cnf.py, which bench/compare_models.sh checks
// against this one on identical weights and times beside it.
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
func newCNF(rng *rand.Rand) *odeblock.Block[float64] {
	net := layers.NewSequential[float64](layers.TimeConcat[float64]{}, layers.NewLinear[float64](rng, 3, 64), layers.Tanh[float64]{}, layers.NewLinear[float64](rng, 64, 64), layers.Tanh[float64]{}, layers.NewLinear[float64](rng, 64, 2))
	field := odeblock.FieldFuncErr(net.Params(), func(tp *ag.Tape[float64], t float64, s ag.Var[float64]) (ag.Var[float64], error) {
		dz, tr, err := ag.TraceExact(func(z ag.Var[float64]) ag.Var[float64] { return net.ForwardT(tp, t, z) }, ag.Narrow(s, 1, 0, 2))
		if err != nil {
			return dz, err
		}
		return ag.Concat(1, dz, tr), nil
	})
	return &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Times: []float64{0, 1}, Solver: odeblock.Options{RTol: 1e-5, ATol: 1e-5}}
}

func train(block *odeblock.Block[float64], x *tensor.Tensor[float64], iters, batch int, rng *rand.Rand) ([]float64, error) {
	opt := optim.NewAdam(block.Params(), optim.AdamDefaults())
	var losses []float64
	for range iters {
		tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
		xb := ag.IndexSelect(tp.Const(x), 0, rng.Perm(x.Dim(0))[:batch])
		s := tp.Check(block.Forward(tp, ag.Concat(1, xb, tp.Const(tensor.New[float64](batch, 1)))))
		loss := ag.Neg(ag.Mean(ag.Add(odeblock.StandardNormalLogProb(ag.Narrow(s, 1, 0, 2)), ag.Narrow(s, 1, 2, 1))))
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
	Train, Test  int // points
	Iters, Batch int
	Seed         uint64
	Log          io.Writer
}

func defaults() config {
	return config{Train: 4096, Test: 1024, Iters: 300, Batch: 256, Seed: 1, Log: os.Stdout}
}

// moons draws n points of scikit-learn's two moons with noise 0.1, scaled
// by 2 and shifted by (−1, −0.2) as in FFJORD's toy data: [n, 2].
func moons(rng *rand.Rand, n int) *tensor.Tensor[float64] {
	x := tensor.New[float64](n, 2)
	for i := range n {
		a := math.Pi * rng.Float64()
		p, q := math.Cos(a), math.Sin(a)
		if i%2 == 1 {
			p, q = 1-p, 0.5-q
		}
		x.Set(2*(p+0.1*rng.NormFloat64())-1, i, 0)
		x.Set(2*(q+0.1*rng.NormFloat64())-0.2, i, 1)
	}
	return x
}

// result is what a run reports.
type result struct {
	Losses                []float64 // per iteration
	TestBefore, TestAfter float64   // mean log-likelihood of the held-out points
}

// run draws the data, trains and evaluates.
func run(c config) (result, error) {
	var r result
	rng := rand.New(rand.NewPCG(c.Seed, 0xc7f))
	x, test := moons(rng, c.Train), moons(rng, c.Test)
	block := newCNF(rng)
	var err error
	if r.TestBefore, err = meanLogProb(block, test); err != nil {
		return r, err
	}
	if r.Losses, err = train(block, x, c.Iters, c.Batch, rng); err != nil {
		return r, err
	}
	if r.TestAfter, err = meanLogProb(block, test); err != nil {
		return r, err
	}
	fmt.Fprintf(c.Log, "%d iterations: training loss %.4f → %.4f; held-out log-likelihood %.4f → %.4f\n",
		c.Iters, r.Losses[0], r.Losses[len(r.Losses)-1], r.TestBefore, r.TestAfter)
	return r, nil
}

// meanLogProb is the flow's mean log-likelihood of x, solved without
// gradients.
func meanLogProb(block *odeblock.Block[float64], x *tensor.Tensor[float64]) (float64, error) {
	tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
	tp.SetNoGrad(true)
	s, err := block.Forward(tp, ag.Concat(1, tp.Const(x), tp.Const(tensor.New[float64](x.Dim(0), 1))))
	if err != nil {
		return 0, err
	}
	return ag.Mean(ag.Add(odeblock.StandardNormalLogProb(ag.Narrow(s, 1, 0, 2)), ag.Narrow(s, 1, 2, 1))).Item(), nil
}

func main() {
	c := defaults()
	flag.IntVar(&c.Iters, "iters", c.Iters, "training iterations")
	flag.IntVar(&c.Batch, "batch", c.Batch, "points per iteration")
	flag.Uint64Var(&c.Seed, "seed", c.Seed, "random seed")
	flag.Parse()
	if _, err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "cnf:", err)
		os.Exit(1)
	}
}
