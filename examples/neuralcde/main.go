// Program neuralcde is torchcde's time-series classification example in
// Go: a neural controlled differential equation (Kidger et al. 2020)
// tells clockwise from anticlockwise 2-D spirals, each observed at its
// own irregular times with noise.
//
//	go run ./examples/neuralcde
//
// Each sample is a spiral (t·cos(±ωt + φ), t·sin(±ωt + φ)), ω = 4π (two
// turns), a random phase φ, at n = 64 times drawn uniformly in [0, 1] and
// sorted (different for every sample), with Gaussian noise of standard
// deviation 0.1; the label is the direction. As in torchcde, the time is
// a channel of the data, [t, x, y], so that the path X carries the
// irregular sampling: the spline's knots are the observations' indices,
// scaled to [0, 1], the same for every sample, and the model sees the true
// times through the first channel.
//
// The model is torchcde's: z_0 = Linear(X(t_0)), dz = f(z)·dX with
// f(z) = tanh(Linear(ReLU(Linear(z)))) read as an H×C matrix
// (odeblock.CDE), X the natural cubic spline of the observations
// (interp.NaturalCubic), and a logit pair Linear(z(T)), trained with Adam
// on the 2-class cross-entropy (the same as torchcde's binary one on one
// logit).
//
// Gradients come from the adjoint along the forward solution
// (-mode interpolated, the default): the backward solve of the adjoint
// reads the state from the forward solve's dense output instead of solving
// for it backwards. The plain adjoint (-mode adjoint, torchcde's default)
// fails here: solved backwards at the training tolerance (1e-3), the CDE's
// state drifts from the forward solution (15% relative), which the adjoint
// detects and refuses with an error; at tolerance 1e-5 it trains to the
// same accuracy but takes about 160 s. Backprop through the solver
// (-mode backprop) also reaches 100%, slower (7 s against 3 s, both with
// the machine shared); both keep the forward's steps, which costs little memory for a
// state this small (B×H = 32×8).
//
// The default run — 256 training and 256 test samples, hidden state 8,
// field width 128, 240 Adam steps of 32 random samples (torchcde's 30
// epochs of 8 batches), each a random batch, at learning rate 1e-3,
// dopri5 at tolerance 1e-3, float64 — takes about 3 s on 2 cores
// (go run adds the build) and ends at a test accuracy of 100% (the
// untrained model: 48%).
//
// The model and its training loop — the model type, newModel, params,
// logits, train and accuracy, between the "lines:" markers — are what
// bench/count_lines.py counts against the same in PyTorch,
// bench/neuralcde_torch.py (torchdiffeq's odeint, torchcde's pieces written
// by hand: its natural cubic spline, which torchcde would supply, is not
// counted; here it is interp.NewNaturalCubic).
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/interp"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
)

const channels = 3 // t, x, y

// config is one run of the example (the flags).
type config struct {
	Train, Test, Points int     // samples in each set; observations per sample
	Noise               float64 // standard deviation of the observation noise
	Hidden, Width       int     // the CDE's state width H; the field's hidden width
	Iters, Batch        int     // Adam steps and samples per step
	LR, Tol             float64 // Adam's learning rate; solver tolerance (rtol = atol)
	Mode                string  // gradient mode
	Seed                uint64
	Log                 io.Writer
}

// result is what a run reports.
type result struct {
	Losses             []float64 // training loss per iteration
	Untrained, TestAcc float64   // test accuracy before and after training
}

func defaults() config {
	return config{Train: 256, Test: 256, Points: 64, Noise: 0.1, Hidden: 8, Width: 128, Iters: 240, Batch: 32,
		LR: 1e-3, Tol: 1e-3, Mode: "interpolated", Seed: 1, Log: os.Stdout}
}

func main() {
	c := defaults()
	flag.IntVar(&c.Train, "train", c.Train, "training samples")
	flag.IntVar(&c.Test, "test", c.Test, "test samples")
	flag.IntVar(&c.Points, "points", c.Points, "observations per sample")
	flag.Float64Var(&c.Noise, "noise", c.Noise, "observation noise (standard deviation)")
	flag.IntVar(&c.Hidden, "hidden", c.Hidden, "width of the CDE's hidden state")
	flag.IntVar(&c.Width, "width", c.Width, "width of the field's hidden layer")
	flag.IntVar(&c.Iters, "iters", c.Iters, "training iterations")
	flag.IntVar(&c.Batch, "batch", c.Batch, "samples per iteration")
	flag.Float64Var(&c.LR, "lr", c.LR, "Adam's learning rate")
	flag.Float64Var(&c.Tol, "tol", c.Tol, "solver tolerance (rtol = atol)")
	flag.StringVar(&c.Mode, "mode", c.Mode, "gradient mode (interpolated, backprop, checkpoint, adjoint, recursive)")
	flag.Uint64Var(&c.Seed, "seed", c.Seed, "random seed")
	flag.Parse()
	if _, err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "neuralcde:", err)
		os.Exit(1)
	}
}

// run generates the data, trains the model and reports its test accuracy.
func run(c config) (result, error) {
	var r result
	if c.Log == nil {
		c.Log = io.Discard
	}
	gm, err := odeblock.ParseGradMode(c.Mode)
	if err != nil {
		return r, err
	}
	if c.Batch < 1 || c.Batch > c.Train || c.Test < 1 || c.Points < 2 {
		return r, fmt.Errorf("want 1 ≤ -batch ≤ -train, -test ≥ 1 and -points ≥ 2, have %d, %d, %d and %d", c.Batch, c.Train, c.Test, c.Points)
	}
	if !(c.LR > 0) {
		return r, fmt.Errorf("want -lr > 0, have %g", c.LR)
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0xcde))
	trainSet, test := spirals(rng, c.Train, c.Points, c.Noise), spirals(rng, c.Test, c.Points, c.Noise)
	m := newModel(rng, c.Hidden, c.Width)
	if r.Untrained, err = m.accuracy(test, c.Tol); err != nil {
		return r, err
	}
	start := time.Now()
	if r.Losses, err = m.train(c, gm, trainSet, rand.New(rand.NewPCG(c.Seed, 0xba7c))); err != nil {
		return r, err
	}
	if r.TestAcc, err = m.accuracy(test, c.Tol); err != nil {
		return r, err
	}
	fmt.Fprintf(c.Log, "trained in %.1fs, loss %.4f → %.4f; test accuracy %.1f%% (untrained %.1f%%)\n",
		time.Since(start).Seconds(), r.Losses[0], r.Losses[len(r.Losses)-1], 100*r.TestAcc, 100*r.Untrained)
	return r, nil
}

// dataset is a set of labelled series: obs [N, n, C], labels 0 or 1.
type dataset struct {
	obs    *tensor.Tensor[float64]
	labels []int
	knots  []float64 // the spline's knots: the indices, scaled to [0, 1]
}

// spirals draws n spirals of p observations each, half of each direction
// at random.
func spirals(rng *rand.Rand, n, p int, noise float64) dataset {
	d := dataset{obs: tensor.New[float64](n, p, channels), labels: make([]int, n), knots: make([]float64, p)}
	for k := range p {
		d.knots[k] = float64(k) / float64(p-1)
	}
	ts, o := make([]float64, p), d.obs.Data()
	for i := range n {
		d.labels[i] = rng.IntN(2)
		dir, phase := float64(2*d.labels[i]-1), 2*math.Pi*rng.Float64()
		for k := range ts {
			ts[k] = rng.Float64()
		}
		slices.Sort(ts)
		for k, t := range ts {
			a := dir*4*math.Pi*t + phase
			row := o[(i*p+k)*channels:]
			row[0], row[1], row[2] = t, t*math.Cos(a)+noise*rng.NormFloat64(), t*math.Sin(a)+noise*rng.NormFloat64()
		}
	}
	return d
}

// batch returns the samples idx of d: obs [len(idx), n, C] and labels.
func (d dataset) batch(idx []int) (*tensor.Tensor[float64], []int) {
	row := d.obs.Dim(1) * channels
	obs, labels := tensor.New[float64](len(idx), d.obs.Dim(1), channels), make([]int, len(idx))
	for j, i := range idx {
		copy(obs.Data()[j*row:(j+1)*row], d.obs.Data()[i*row:(i+1)*row])
		labels[j] = d.labels[i]
	}
	return obs, labels
}

// lines: begin
type model struct {
	initial, readout *layers.Linear[float64]
	f                *layers.Sequential[float64] // z [B, H] → [B, H·C]
}

func newModel(rng *rand.Rand, hidden, width int) *model {
	return &model{initial: layers.NewLinear[float64](rng, channels, hidden), f: layers.NewSequential[float64](layers.NewLinear[float64](rng, hidden, width), layers.ReLU[float64]{}, layers.NewLinear[float64](rng, width, hidden*channels), layers.Tanh[float64]{}), readout: layers.NewLinear[float64](rng, hidden, 2)}
}

func (m *model) logits(tp *ag.Tape[float64], knots []float64, obs *tensor.Tensor[float64], gm odeblock.GradMode, tol float64) (ag.Var[float64], error) {
	x, err := interp.NewNaturalCubic(knots, tp.Const(obs))
	if err != nil {
		return ag.Var[float64]{}, err
	}
	blk := &odeblock.Block[float64]{Dynamics: &odeblock.CDE[float64]{F: m.f, X: x}, Times: []float64{knots[0], knots[len(knots)-1]}, Mode: gm, Solver: odeblock.Options{RTol: tol, ATol: tol}}
	zT := tp.Check(blk.Forward(tp, m.initial.Forward(tp, x.Evaluate(tp, knots[0]))))
	return m.readout.Forward(tp, zT), tp.Err()
}

func (m *model) train(c config, gm odeblock.GradMode, d dataset, rng *rand.Rand) ([]float64, error) {
	opt := optim.NewAdam(layers.ParamsOf[float64](m.initial, m.f, m.readout), optim.AdamDefaults().WithLR(c.LR))
	var losses []float64
	tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
	for range c.Iters {
		obs, labels := d.batch(rng.Perm(len(d.labels))[:c.Batch])
		tp.Reset()
		logits, err := m.logits(tp, d.knots, obs, gm, c.Tol)
		if err != nil {
			return losses, err
		}
		loss := ag.SoftmaxCrossEntropy(logits, labels)
		if err := optim.Minimize(opt, tp, loss); err != nil {
			return losses, err
		}
		losses = append(losses, loss.Item())
	}
	return losses, nil
}

func (m *model) accuracy(d dataset, tol float64) (float64, error) {
	tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
	tp.SetNoGrad(true)
	logits, err := m.logits(tp, d.knots, d.obs, odeblock.Backprop{}, tol)
	if err != nil {
		return 0, err
	}
	var right int
	for i, k := range tensor.ArgMax(logits.Value(), 1) {
		if k == d.labels[i] {
			right++
		}
	}
	return float64(right) / float64(len(d.labels)), nil
}

// lines: end
