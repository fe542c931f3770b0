// Program rnode trains a continuous normalizing flow with RNODE's
// regularisation (Finlay et al. 2020, "How to train your neural ODE"):
// besides the flow's log-density, the solve integrates the kinetic energy
// ∫‖f‖² dt and the Jacobian's Frobenius norm ∫‖∂f/∂z‖²_F dt, the latter
// and the trace both estimated from one vector–Jacobian product εᵀ·∂f/∂z
// with a Gaussian probe ε drawn once per solve (Hutchinson): the state is
// [z, ℓ, k, j] with z' = f(t, z), ℓ' = εᵀ(∂f/∂z)ε, k' = ‖f‖²,
// j' = ‖εᵀ·∂f/∂z‖², and the loss −mean(log N(z(1); 0, I) + ℓ(1)) +
// 0.01·mean(k(1)) + 0.01·mean(j(1)). The product is autograd.VJPOf
// inside the field (torch.autograd.grad(f, z, ε, create_graph=True)); the
// gradient comes from the adjoint (odeint_adjoint).
//
// The field is an MLP [z, t] → 64 → 64 → 2 with tanh; the data eight
// Gaussians on a circle (FFJORD's "8gaussians"); Adam (PyTorch's
// defaults, lr 1e-3), batches of 256, dopri5 at rtol = atol = 1e-5,
// float64.
//
//	go run ./examples/rnode
//
// It reports the training loss as it falls, and the held-out points'
// log-likelihood and the two regularisers before and after.
//
// Each iteration records on a fresh tape, as PyTorch builds a fresh graph:
// the solves run on the block's own tapes, and reusing one tape
// (Tape.Reset) measured no faster here.
//
// The model and its training loop — newRNODE and train, between the
// "lines:" markers — are what bench/count_lines.py counts against the same
// model in PyTorch, bench/torch_rnode.py, which bench/compare_models.sh
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
func newRNODE(rng *rand.Rand, batch int) (*odeblock.Block[float64], *tensor.Tensor[float64]) {
	net := layers.NewSequential[float64](layers.TimeConcat[float64]{}, layers.NewLinear[float64](rng, 3, 64), layers.Tanh[float64]{}, layers.NewLinear[float64](rng, 64, 64), layers.Tanh[float64]{}, layers.NewLinear[float64](rng, 64, 2))
	e := tensor.New[float64](batch, 2) // Hutchinson's probe, drawn before each solve
	field := odeblock.FieldFuncErr(net.Params(), func(tp *ag.Tape[float64], t float64, s ag.Var[float64]) (ag.Var[float64], error) {
		dz, eJ, err := ag.VJPOf(func(z ag.Var[float64]) ag.Var[float64] { return net.ForwardT(tp, t, z) }, ag.Narrow(s, 1, 0, 2), tp.Const(e))
		if err != nil {
			return dz, err
		}
		return ag.Concat(1, dz, ag.SumAxis(ag.Mul(eJ, tp.Const(e)), 1, true), ag.SumAxis(ag.Square(dz), 1, true), ag.SumAxis(ag.Square(eJ), 1, true)), nil
	})
	return &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Times: []float64{0, 1}, Solver: odeblock.Options{RTol: 1e-5, ATol: 1e-5}}, e
}

func train(block *odeblock.Block[float64], e, x *tensor.Tensor[float64], iters, batch int, rng *rand.Rand) ([]float64, error) {
	opt := optim.NewAdam(block.Params(), optim.AdamDefaults())
	var losses []float64
	for range iters {
		tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
		xb := ag.IndexSelect(tp.Const(x), 0, rng.Perm(x.Dim(0))[:batch])
		e.Copy(ag.GaussianProbe[float64](rng, batch, 2))
		s := tp.Check(block.Forward(tp, ag.Concat(1, xb, tp.Const(tensor.New[float64](batch, 3)))))
		logp := ag.Add(odeblock.StandardNormalLogProb(ag.Narrow(s, 1, 0, 2)), ag.Narrow(s, 1, 2, 1))
		loss := ag.Add(ag.Neg(ag.Mean(logp)), ag.Scale(ag.Mean(ag.Add(ag.Narrow(s, 1, 3, 1), ag.Narrow(s, 1, 4, 1))), 0.01))
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

// eightGaussians draws n points of a mixture of eight equally weighted
// Gaussians of standard deviation 0.5/√2 whose means lie evenly on the
// circle of radius 4/√2 (FFJORD's "8gaussians"): [n, 2].
func eightGaussians(rng *rand.Rand, n int) *tensor.Tensor[float64] {
	x := tensor.New[float64](n, 2)
	for i := range n {
		a := float64(rng.IntN(8)) * math.Pi / 4
		x.Set((4*math.Cos(a)+0.5*rng.NormFloat64())/math.Sqrt2, i, 0)
		x.Set((4*math.Sin(a)+0.5*rng.NormFloat64())/math.Sqrt2, i, 1)
	}
	return x
}

// result is what a run reports.
type result struct {
	Losses []float64 // per iteration
	// The held-out points' mean log-likelihood, kinetic energy and
	// Jacobian norm, before and after.
	Before, After evaluation
}

type evaluation struct{ LogLik, Kinetic, Jacobian float64 }

// run draws the data, trains and evaluates.
func run(c config) (result, error) {
	var r result
	rng := rand.New(rand.NewPCG(c.Seed, 0x20de))
	x, test := eightGaussians(rng, c.Train), eightGaussians(rng, c.Test)
	block, e := newRNODE(rng, c.Batch)
	var err error
	if r.Before, err = evaluate(block, e, test, rng); err != nil {
		return r, err
	}
	if r.Losses, err = train(block, e, x, c.Iters, c.Batch, rng); err != nil {
		return r, err
	}
	if r.After, err = evaluate(block, e, test, rng); err != nil {
		return r, err
	}
	fmt.Fprintf(c.Log, "%d iterations: training loss %.4f → %.4f; held out: log-likelihood %.4f → %.4f, kinetic energy %.4f → %.4f, Jacobian norm %.4f → %.4f\n",
		c.Iters, r.Losses[0], r.Losses[len(r.Losses)-1], r.Before.LogLik, r.After.LogLik, r.Before.Kinetic, r.After.Kinetic, r.Before.Jacobian, r.After.Jacobian)
	return r, nil
}

// evaluate solves the flow from x, in batches of e's rows, without
// gradients, and returns the means of the log-likelihood and the
// regularisers (the trace and the Jacobian's norm estimated with a fresh
// probe each batch, as in training).
func evaluate(block *odeblock.Block[float64], e, x *tensor.Tensor[float64], rng *rand.Rand) (evaluation, error) {
	var ev evaluation
	batch, n := e.Dim(0), 0
	tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
	tp.SetNoGrad(true)
	for i := 0; i+batch <= x.Dim(0); i += batch {
		tp.Reset()
		e.Copy(ag.GaussianProbe[float64](rng, batch, 2))
		xb := ag.Narrow(tp.Const(x), 0, i, batch)
		s, err := block.Forward(tp, ag.Concat(1, xb, tp.Const(tensor.New[float64](batch, 3))))
		if err != nil {
			return ev, err
		}
		ev.LogLik += ag.Mean(ag.Add(odeblock.StandardNormalLogProb(ag.Narrow(s, 1, 0, 2)), ag.Narrow(s, 1, 2, 1))).Item()
		ev.Kinetic += ag.Mean(ag.Narrow(s, 1, 3, 1)).Item()
		ev.Jacobian += ag.Mean(ag.Narrow(s, 1, 4, 1)).Item()
		n++
	}
	ev.LogLik, ev.Kinetic, ev.Jacobian = ev.LogLik/float64(n), ev.Kinetic/float64(n), ev.Jacobian/float64(n)
	return ev, nil
}

func main() {
	c := defaults()
	flag.IntVar(&c.Iters, "iters", c.Iters, "training iterations")
	flag.IntVar(&c.Batch, "batch", c.Batch, "points per iteration")
	flag.Uint64Var(&c.Seed, "seed", c.Seed, "random seed")
	flag.Parse()
	if _, err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "rnode:", err)
		os.Exit(1)
	}
}
