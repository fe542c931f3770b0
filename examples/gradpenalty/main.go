// Program gradpenalty trains a Wasserstein GAN with gradient penalty
// (WGAN-GP, Gulrajani et al. 2017) on eight Gaussians: the critic's loss
// is D(fake) − D(real) + 10·(‖∇ₓD(x̂)‖ − 1)² at random points x̂ between
// real and generated samples, the gradient ∇ₓD taken with autograd.GradOf
// (torch.autograd.grad with create_graph=True) so that the critic's
// Backward differentiates the penalty through it (its error, which only a
// node without a backward in ops can cause, checked once with Tape.Check:
// optim.Minimize's Backward returns it); five critic steps per
// generator step, Adam with lr 1e-4 and betas (0, 0.9) as in the paper.
// Generator and critic are MLPs 2 → 128 → 128 → 2 (→ 1) with ReLU; the
// generator's input is 2-D standard normal noise; batches of 256,
// float64. One tape serves every step (Tape.Reset keeps its buffers): a
// fresh tape per step, which PyTorch's fresh graph per step suggests, made
// a step 1.5 times slower here, where the whole pass lives on the tape.
//
//	go run ./examples/gradpenalty
//
// It reports the critic's loss and how far generated samples lie from the
// data: the mean distance from a sample to the nearest of the eight
// centres, before and after (the data themselves: about 0.44).
//
// The model and its training loop — newModels, gradientPenalty and train,
// between the "lines:" markers — are what bench/count_lines.py counts
// against the same model in PyTorch, bench/torch_gradpenalty.py, which
// bench/compare_models.sh checks against this one on identical weights and
// times beside it.
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
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
)

// lines: begin
func newModels(rng *rand.Rand) (G, D *layers.Sequential[float64]) {
	G = layers.NewSequential[float64](layers.NewLinear[float64](rng, 2, 128), layers.ReLU[float64]{}, layers.NewLinear[float64](rng, 128, 128), layers.ReLU[float64]{}, layers.NewLinear[float64](rng, 128, 2))
	D = layers.NewSequential[float64](layers.NewLinear[float64](rng, 2, 128), layers.ReLU[float64]{}, layers.NewLinear[float64](rng, 128, 128), layers.ReLU[float64]{}, layers.NewLinear[float64](rng, 128, 1))
	return G, D
}

func gradientPenalty(tp *ag.Tape[float64], D *layers.Sequential[float64], real, fake ag.Var[float64], rng *rand.Rand) ag.Var[float64] {
	a := tp.Const(tensor.RandU[float64](rng, 0, 1, real.Shape()[0], 1))
	x := ag.Add(ag.Mul(a, real), ag.Mul(ag.RSub(1, a), fake))
	g := tp.Check(ag.GradOf(func(x ag.Var[float64]) ag.Var[float64] { return ag.Sum(D.Forward(tp, x)) }, x))
	return ag.Mean(ag.Square(ag.AddConst(ag.Sqrt(ag.SumAxis(ag.Square(g), 1, false)), -1)))
}

func train(G, D *layers.Sequential[float64], data *tensor.Tensor[float64], iters, batch int, rng *rand.Rand) ([]float64, error) {
	c := optim.AdamConfig{LR: 1e-4, Beta1: 0, Beta2: 0.9, Eps: 1e-8}
	optG, optD := optim.NewAdam(G.Params(), c), optim.NewAdam(D.Params(), c)
	var losses []float64
	tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
	for range iters {
		for range 5 {
			tp.Reset()
			real := ag.IndexSelect(tp.Const(data), 0, rng.Perm(data.Dim(0))[:batch])
			fake := ag.Detach(G.Forward(tp, tp.Const(tensor.RandN[float64](rng, 0, 1, batch, 2))))
			lossD := ag.Add(ag.Sub(ag.Mean(D.Forward(tp, fake)), ag.Mean(D.Forward(tp, real))), ag.Scale(gradientPenalty(tp, D, real, fake, rng), 10))
			if err := optim.Minimize(optD, tp, lossD); err != nil {
				return losses, err
			}
			losses = append(losses, lossD.Item())
		}
		tp.Reset()
		lossG := ag.Neg(ag.Mean(D.Forward(tp, G.Forward(tp, tp.Const(tensor.RandN[float64](rng, 0, 1, batch, 2))))))
		if err := optim.Minimize(optG, tp, lossG); err != nil {
			return losses, err
		}
		losses = append(losses, lossG.Item())
	}
	return losses, nil
}

// lines: end

// config is one run (the flags).
type config struct {
	Data         int // points
	Iters, Batch int // generator steps (each after five critic steps); samples per step
	Seed         uint64
	Log          io.Writer
}

func defaults() config {
	return config{Data: 8192, Iters: 1000, Batch: 256, Seed: 1, Log: os.Stdout}
}

// centres are the eight Gaussians' means: evenly on the circle of radius
// 4/√2.
func centres() [8][2]float64 {
	var c [8][2]float64
	for k := range c {
		a := float64(k) * math.Pi / 4
		c[k] = [2]float64{4 * math.Cos(a) / math.Sqrt2, 4 * math.Sin(a) / math.Sqrt2}
	}
	return c
}

// eightGaussians draws n points of the mixture of eight equally weighted
// Gaussians of standard deviation 0.5/√2 at centres (FFJORD's and
// WGAN-GP's "8gaussians"): [n, 2].
func eightGaussians(rng *rand.Rand, n int) *tensor.Tensor[float64] {
	x, c := tensor.New[float64](n, 2), centres()
	for i := range n {
		k := c[rng.IntN(8)]
		x.Set(k[0]+0.5/math.Sqrt2*rng.NormFloat64(), i, 0)
		x.Set(k[1]+0.5/math.Sqrt2*rng.NormFloat64(), i, 1)
	}
	return x
}

// modeDistance is the mean distance from a row of x to its nearest centre.
func modeDistance(x *tensor.Tensor[float64]) float64 {
	c, d := centres(), 0.0
	for i := range x.Dim(0) {
		best := math.Inf(1)
		for _, k := range c {
			best = min(best, math.Hypot(x.At(i, 0)-k[0], x.At(i, 1)-k[1]))
		}
		d += best
	}
	return d / float64(x.Dim(0))
}

// sample draws n points from the generator.
func sample(G *layers.Sequential[float64], rng *rand.Rand, n int) *tensor.Tensor[float64] {
	tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
	tp.SetNoGrad(true)
	return G.Forward(tp, tp.Const(tensor.RandN[float64](rng, 0, 1, n, 2))).Value().Clone()
}

// result is what a run reports.
type result struct {
	Losses                 []float64 // the critic's five then the generator's, per iteration
	Before, After, Data    float64   // mean distance to the nearest centre: generated samples, the data
	CriticFirst, CriticEnd float64   // the mean critic loss of the first and the last 50 iterations
}

// run draws the data, trains and evaluates.
func run(c config) (result, error) {
	var r result
	rng := rand.New(rand.NewPCG(c.Seed, 0x6a9))
	data := eightGaussians(rng, c.Data)
	G, D := newModels(rng)
	r.Data, r.Before = modeDistance(data), modeDistance(sample(G, rng, 2048))
	var err error
	if r.Losses, err = train(G, D, data, c.Iters, c.Batch, rng); err != nil {
		return r, err
	}
	r.After = modeDistance(sample(G, rng, 2048))
	r.CriticFirst, r.CriticEnd = criticMean(r.Losses, 0, min(50, c.Iters)), criticMean(r.Losses, max(0, c.Iters-50), c.Iters)
	fmt.Fprintf(c.Log, "%d iterations: critic loss %.4f → %.4f; mean distance to the nearest centre %.3f → %.3f (the data: %.3f)\n",
		c.Iters, r.CriticFirst, r.CriticEnd, r.Before, r.After, r.Data)
	return r, nil
}

// criticMean is the mean of the critic's losses in iterations [lo, hi).
func criticMean(losses []float64, lo, hi int) float64 {
	var s float64
	for i := lo; i < hi; i++ {
		for _, l := range losses[6*i : 6*i+5] {
			s += l
		}
	}
	return s / float64(5*(hi-lo))
}

func main() {
	c := defaults()
	flag.IntVar(&c.Iters, "iters", c.Iters, "generator steps")
	flag.IntVar(&c.Batch, "batch", c.Batch, "samples per step")
	flag.Uint64Var(&c.Seed, "seed", c.Seed, "random seed")
	flag.Parse()
	if _, err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "gradpenalty:", err)
		os.Exit(1)
	}
}
