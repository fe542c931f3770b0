// Program latentode trains the latent ODE of Rubanova et al. (2019), as in
// torchdiffeq's examples/latent_ode.py, on irregularly sampled noisy sine
// waves (data.SineWaves): each series is observed at its own times before
// t = Split and held out after it.
//
// A recognition GRU runs backwards in time over the union of a batch's
// observation times, fed each observation and its time; where a series has
// no observation at a union time its state is carried through unchanged
// (the mask). Its last state gives the approximate posterior
// q(z0) = N(μ, σ²) (σ = exp(½·logvar), as torchdiffeq), from which z0 is
// drawn with the reparameterisation trick. The latent dynamics
// dz/dt = f(z), an MLP (4 → 20 → 20 → 4, tanh), are solved by odeblock at
// the batch's times (Block.Trajectory, dopri5, gradients by
// backpropagation through the solver as torchdiffeq's odeint), and a
// decoder (4 → 20 → 1, ReLU) maps the latent path to the observations.
// Training maximises the ELBO
//
//	Σ_observed log N(x; dec(z(t)), 0.1²) − KL(q(z0) ‖ N(0, I))
//
// (the likelihood's noise fixed at the data's, as torchdiffeq's example)
// with Adam, each step on a random batch of series, on one tape reused
// (Tape.Reset keeps its buffers: a fresh tape per step made a step twice as
// slow).
//
//	go run ./examples/latentode -out latentode.png
//
// It reports the loss (−ELBO per series) of the first and last steps and,
// on held-out series decoded from the posterior mean, the mean squared
// error of the reconstruction of the observed part (t < Split) and of the
// extrapolation beyond it, against the noisy observations (the noise alone
// gives 0.01) and against predicting zero. The PNG shows a few held-out
// series: their observations, the true wave, the reconstruction and the
// extrapolation.
//
// The default run — 1000 training and 100 test series of 30 points on a
// grid of 101 over [0, 10], frequencies in [0.1, 0.3] cycles per unit of
// time, float32, 3000 Adam steps of 50 series at learning rate 1e-2,
// dopri5 at tolerance 1e-3 — takes about 10 s on 2 cores. The loss falls
// from about 400 to about 3 nats per series; on the test series the
// reconstruction's MSE is 0.021 (the untrained model's 0.54, predicting
// zero 0.51, the noise alone 0.01) and the extrapolation's over the next
// five units of time 0.16 (predicting zero 0.50).
//
// The model and its training loop — the model type, newModel, params,
// encode, decode, loss and trainModel, between the "lines:" markers — are
// what bench/count_lines.py counts against the same model in PyTorch,
// bench/latentode_torch.py (whose collate, its padding of a batch to the
// union of its times, is data.NewSeriesBatch here and is not counted).
package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/dist"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
)

// config is one run of the example (the flags).
type config struct {
	Train, Test  int     // series in the training and test sets
	Points, Grid int     // observations per series, drawn from a grid of Grid times on [0, TMax]
	TMax, Split  float64 // the time span; observed before Split, held out after
	Noise        float64 // the observations' noise, and the likelihood's fixed std
	Seed         uint64  // data, initialisation, batches and samples
	Latent       int     // size of z
	Hidden, RNN  int     // width of the field's and decoder's hidden layers; of the GRU's state
	Iters, Batch int     // Adam steps and series per step
	LR           float64 // Adam's learning rate
	Tol          float64 // solver tolerance (rtol = atol)
	Plot         int     // test series in the PNG
	Out          string  // the PNG; "" writes none
	Log          io.Writer
}

// result is what a run reports.
type result struct {
	Losses                   []float64 // −ELBO per series of each training batch
	ReconMSE, ExtrapMSE      float64   // on the test set, against the observations
	ZeroRecon, ZeroExtrap    float64   // the same for predicting 0
	UntrainedRecon, Duration float64   // the untrained model's reconstruction MSE; training seconds
}

func defaults() config {
	return config{Train: 1000, Test: 100, Points: 30, Grid: 101, TMax: 10, Split: 5, Noise: 0.1, Seed: 1,
		Latent: 4, Hidden: 20, RNN: 25, Iters: 3000, Batch: 50, LR: 1e-2, Tol: 1e-3, Plot: 4,
		Out: "latentode.png", Log: os.Stdout}
}

func main() {
	c := defaults()
	flag.IntVar(&c.Train, "train", c.Train, "training series")
	flag.IntVar(&c.Iters, "iters", c.Iters, "training iterations")
	flag.IntVar(&c.Batch, "batch", c.Batch, "series per iteration")
	flag.Float64Var(&c.LR, "lr", c.LR, "Adam's learning rate")
	flag.IntVar(&c.Latent, "latent", c.Latent, "latent dimension")
	flag.Float64Var(&c.Tol, "tol", c.Tol, "solver tolerance (rtol = atol)")
	flag.Uint64Var(&c.Seed, "seed", c.Seed, "random seed")
	flag.StringVar(&c.Out, "out", c.Out, "the PNG (empty: none)")
	flag.Parse()
	if _, err := run[float32](c); err != nil {
		fmt.Fprintln(os.Stderr, "latentode:", err)
		os.Exit(1)
	}
}

// run generates the data, trains the model, evaluates it on the test
// series and writes the plot.
func run[T tensor.Float](c config) (result, error) {
	var r result
	if c.Log == nil {
		c.Log = io.Discard
	}
	if !(c.LR > 0) {
		return r, fmt.Errorf("want -lr > 0, have %g", c.LR)
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0x1a7e))
	series, waves, err := data.SineWaves(rng, c.Train+c.Test, data.SineOptions{Points: c.Points, TMax: c.TMax,
		Grid: c.Grid, MinFreq: 0.1, MaxFreq: 0.3, Noise: c.Noise})
	if err != nil {
		return r, err
	}
	trainSet, test, testWaves := series[:c.Train], series[c.Train:], waves[c.Train:]
	m := newModel[T](rng, c)
	if r.UntrainedRecon, _, _, _, err = evaluate(m, test, c.Split); err != nil {
		return r, err
	}
	fmt.Fprintf(c.Log, "%d training and %d test series of %d points on [0, %g], observed before t = %g; untrained reconstruction MSE %.4f\n",
		c.Train, c.Test, c.Points, c.TMax, c.Split, r.UntrainedRecon)
	start := time.Now()
	observed, _ := data.SplitTimes(trainSet, c.Split)
	if r.Losses, err = trainModel(c, m, observed, rand.New(rand.NewPCG(c.Seed, 0xba7c))); err != nil {
		return r, err
	}
	r.Duration = time.Since(start).Seconds()
	if r.ReconMSE, r.ExtrapMSE, r.ZeroRecon, r.ZeroExtrap, err = evaluate(m, test, c.Split); err != nil {
		return r, err
	}
	fmt.Fprintf(c.Log, "trained in %.1fs, loss (−ELBO) %.2f → %.2f; test MSE against the observations: reconstruction %.4f, extrapolation %.4f (predicting 0: %.4f, %.4f; the noise alone: %.4f)\n",
		r.Duration, r.Losses[0], r.Losses[len(r.Losses)-1], r.ReconMSE, r.ExtrapMSE, r.ZeroRecon, r.ZeroExtrap, c.Noise*c.Noise)
	if c.Out == "" {
		return r, nil
	}
	n := min(c.Plot, len(test))
	curves, err := predictDense(m, test[:n], c.Split, c.TMax, 200)
	if err != nil {
		return r, err
	}
	if err := plotSeries(c.Out, test[:n], testWaves[:n], curves, c.Split, c.TMax, r.ReconMSE, r.ExtrapMSE); err != nil {
		return r, err
	}
	fmt.Fprintln(c.Log, "wrote", c.Out)
	return r, nil
}

// lines: begin
type model[T tensor.Float] struct {
	rec   *layers.GRUCell[T]
	toQ   *layers.Linear[T]
	block *odeblock.Block[T]
	dec   *layers.Sequential[T]
}

func newModel[T tensor.Float](rng *rand.Rand, c config) *model[T] {
	field := layers.NewSequential[T](layers.NewLinear[T](rng, c.Latent, c.Hidden), layers.Tanh[T]{}, layers.NewLinear[T](rng, c.Hidden, c.Hidden), layers.Tanh[T]{}, layers.NewLinear[T](rng, c.Hidden, c.Latent))
	return &model[T]{rec: layers.NewGRUCell[T](rng, 2, c.RNN), toQ: layers.NewLinear[T](rng, c.RNN, 2*c.Latent),
		block: &odeblock.Block[T]{Dynamics: &odeblock.NODE[T]{F: field}, Mode: odeblock.Backprop{}, Solver: odeblock.Options{RTol: c.Tol, ATol: c.Tol}},
		dec:   layers.NewSequential[T](layers.NewLinear[T](rng, c.Latent, c.Hidden), layers.ReLU[T]{}, layers.NewLinear[T](rng, c.Hidden, 1))}
}

func (m *model[T]) encode(tp *ag.Tape[T], b *data.SeriesBatch[T]) dist.Normal[T] {
	x, mask, h := tp.Const(b.Values), tp.Const(b.Mask), tp.Const(tensor.New[T](b.Len(), m.rec.Hidden()))
	for j := len(b.Times) - 1; j >= 0; j-- { // backwards in time; a series' state moves only where it is observed
		xj := ag.ConcatTime(ag.Select(x, 1, j), T(b.Times[j]))
		h = ag.Add(h, ag.Mul(ag.Select(mask, 1, j), ag.Sub(m.rec.Step(tp, xj, h), h)))
	}
	q := ag.Chunk(m.toQ.Forward(tp, h), 2, 1)
	return dist.Normal[T]{Loc: q[0], Scale: ag.Exp(ag.Scale(q[1], 0.5))}
}

func (m *model[T]) decode(tp *ag.Tape[T], z0 ag.Var[T], times []float64) ag.Var[T] {
	m.block.Times = slices.Compact(append([]float64{0}, times...)) // from z0 at t = 0
	z := tp.Check(m.block.Trajectory(tp, z0))
	return ag.Permute(m.dec.Forward(tp, ag.Narrow(z, 0, len(m.block.Times)-len(times), len(times))), 1, 0, 2)
}

func (m *model[T]) loss(tp *ag.Tape[T], b *data.SeriesBatch[T], noise float64, rng *rand.Rand) ag.Var[T] {
	q := m.encode(tp, b)
	xhat := m.decode(tp, q.Sample(tp, rng), b.Times)
	logpx := ag.SumAxis(ag.MaskedSum(dist.Normal[T]{Loc: xhat, Scale: tp.Scalar(T(noise))}.LogProb(tp.Const(b.Values)), b.Mask, 1, false), 1, false)
	kl := ag.SumAxis(dist.KLNormal(q, dist.Normal[T]{Loc: tp.Scalar(0), Scale: tp.Scalar(1)}), 1, false)
	return ag.Mean(ag.Sub(kl, logpx))
}

func trainModel[T tensor.Float](c config, m *model[T], observed []data.Series, rng *rand.Rand) ([]float64, error) {
	opt := optim.NewAdam(layers.ParamsOf[T](m.rec, m.toQ, m.block, m.dec), optim.AdamDefaults().WithLR(c.LR))
	var losses []float64
	tp := ag.NewTape(tensor.EngineFor[T](tensor.Default()))
	for range c.Iters {
		b, err := data.NewSeriesBatch[T](data.Choose(rng, observed, c.Batch))
		if err != nil {
			return losses, err
		}
		tp.Reset()
		loss := m.loss(tp, b, c.Noise, rng)
		if err := optim.Minimize(opt, tp, loss); err != nil {
			return losses, err
		}
		losses = append(losses, float64(loss.Item()))
	}
	return losses, nil
}

// lines: end

// predict encodes the parts of series before split and decodes the
// posterior mean at times, without gradients: [len(series), len(times)].
func predict[T tensor.Float](m *model[T], series []data.Series, split float64, times []float64) ([][]float64, error) {
	observed, _ := data.SplitTimes(series, split)
	b, err := data.NewSeriesBatch[T](observed)
	if err != nil {
		return nil, err
	}
	tp := ag.NewTape(tensor.EngineFor[T](tensor.Default()))
	tp.SetNoGrad(true)
	xhat := m.decode(tp, m.encode(tp, b).Loc, times)
	if err := tp.Err(); err != nil {
		return nil, err
	}
	out, v := make([][]float64, len(series)), xhat.Value().Data()
	for i := range out {
		out[i] = make([]float64, len(times))
		for j := range times {
			out[i][j] = float64(v[i*len(times)+j])
		}
	}
	return out, nil
}

// evaluate returns the mean squared errors of the model's predictions of
// the observations before split (reconstruction) and after it
// (extrapolation), and those of predicting 0.
func evaluate[T tensor.Float](m *model[T], series []data.Series, split float64) (recon, extrap, zeroRecon, zeroExtrap float64, err error) {
	all, err := data.NewSeriesBatch[T](series)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	pred, err := predict(m, series, split, all.Times)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	var sums [4]float64
	var counts [2]float64
	for i, s := range series {
		for k, t := range s.Times {
			x, p, part := s.Values[k], pred[i][all.Pos[i][k]], 0
			if t >= split {
				part = 1
			}
			sums[part] += (p - x) * (p - x)
			sums[2+part] += x * x
			counts[part]++
		}
	}
	return sums[0] / counts[0], sums[1] / counts[1], sums[2] / counts[0], sums[3] / counts[1], nil
}

// predictDense returns the predictions for series at n times evenly spaced
// on [0, tmax], and those times.
func predictDense[T tensor.Float](m *model[T], series []data.Series, split, tmax float64, n int) (curves, error) {
	times := make([]float64, n)
	for i := range times {
		times[i] = tmax * float64(i) / float64(n-1)
	}
	ys, err := predict(m, series, split, times)
	return curves{T: times, Y: ys}, err
}

// curves are predictions at common times.
type curves struct {
	T []float64
	Y [][]float64
}
