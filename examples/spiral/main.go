// Program spiral is torchdiffeq's ode_demo in Go: it learns the dynamics
// of a spiral, dy/dt = A·y³ with A = [[−0.1, 2], [−2, −0.1]], from one
// observed trajectory, by fitting a neural ODE dy/dt = f(y³) (an MLP
// 2 → 50 → 2 with tanh) to batches of short windows of it, then plots the
// true and the learned trajectories.
//
//	go run ./examples/spiral -iters 2000 -out spiral.png
//
// The mode flag switches the gradient (adjoint, backprop, checkpoint,
// recursive); nothing else changes. The training loop is train.Fit's, of a
// train.Sampled task (random windows, the mean absolute error): one line
// per epoch of 100 iterations.
package main

import (
	"context"
	"flag"
	"fmt"
	"image/color"
	"io"
	"math"
	"math/rand/v2"
	"os"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/train"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

const (
	nObs   = 1000 // observations of the true trajectory on [0, 25]
	window = 10   // time points per training window
	batch  = 20   // windows per iteration
)

// cubeField is f(y) = MLP(y³), the form of the true dynamics.
type cubeField struct{ mlp *layers.Sequential[float64] }

func (f cubeField) ForwardT(tp *ag.Tape[float64], _ float64, y ag.Var[float64]) ag.Var[float64] {
	return f.mlp.Forward(tp, ag.Pow(y, 3))
}
func (f cubeField) Params() []*ag.Param[float64] { return f.mlp.Params() }

func main() {
	iters := flag.Int("iters", 2000, "training iterations (a multiple of 100: the epochs are 100 each)")
	mode := flag.String("mode", "adjoint", "gradient mode")
	out := flag.String("out", "spiral.png", "the plot")
	flag.Parse()
	gm, err := odeblock.ParseGradMode(*mode)
	check(err)
	_, dev, err := run(*iters, gm, *out, os.Stdout)
	check(err)
	fmt.Printf("largest distance from the true trajectory over [0, 25]: %.3f\n", dev)
}

// windows is a batch: the windows' first points y0 [batch, 2] and the
// windows [window, batch, 2].
type windows struct{ y0, target *tensor.Tensor[float64] }

// run trains for iters iterations with gradients by gm (train.Fit, logging
// to log), plots to out and returns the rows and the largest distance of
// the learned trajectory from the true one.
func run(iters int, gm odeblock.GradMode, out string, log io.Writer) ([]train.Row, float64, error) {
	dt := 25.0 / (nObs - 1)
	ts := make([]float64, nObs)
	for i := range ts {
		ts[i] = float64(i) * dt
	}
	truth := trueSpiral(ts)
	rng := rand.New(rand.NewPCG(1, 2))
	mlp := layers.NewSequential[float64]().
		Add("fc1", layers.NewLinear[float64](rng, 2, 50)).Add("tanh", layers.Tanh[float64]{}).
		Add("fc2", layers.NewLinear[float64](rng, 50, 2))
	f := cubeField{mlp}
	wts := ts[:window] // every window starts at 0: the dynamics are autonomous
	block := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: f}, Times: wts, Mode: gm,
		Solver: odeblock.Options{RTol: 1e-6, ATol: 1e-6}}
	task := &train.Sampled[float64, windows]{Parameters: f.Params(), PerEpoch: 100, Seed: 1, Counter: block,
		Sample: func(rng *rand.Rand) (windows, error) { // windows starting at random observations
			w := windows{tensor.New[float64](batch, 2), tensor.New[float64](window, batch, 2)}
			for b := range batch {
				s := rng.IntN(nObs - window)
				copy(w.y0.Data()[2*b:], truth[s][:])
				for k := range window {
					copy(w.target.Data()[(k*batch+b)*2:], truth[s+k][:])
				}
			}
			return w, nil
		},
		Objective: func(tp *ag.Tape[float64], w windows) (train.Loss[float64], error) {
			pred, err := block.Trajectory(tp, tp.Const(w.y0))
			return train.Loss[float64]{Value: ag.Mean(ag.Abs(ag.Sub(pred, tp.Const(w.target))))}, err
		}}
	opt := optim.NewRMSprop(f.Params(), optim.RMSpropConfig{LR: 1e-3, Alpha: 0.99, Eps: 1e-8})
	res, err := train.Fit(context.Background(), train.Config{Name: "spiral", Epochs: max(iters/100, 1), Log: log}, task, opt)
	if err != nil {
		return nil, 0, err
	}
	// The learned dynamics from the true start, over the whole span.
	full := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: f}, Times: ts, Solver: block.Solver}
	tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
	tp.SetNoGrad(true)
	learned, err := full.Trajectory(tp, tp.Const(tensor.FromSlice(truth[0][:], 1, 2)))
	if err != nil {
		return nil, 0, err
	}
	var dev float64
	for i, p := range truth {
		l := learned.Value().Data()[2*i : 2*i+2]
		dev = max(dev, math.Hypot(l[0]-p[0], l[1]-p[1]))
	}
	return res.Rows, dev, plotSpiral(out, truth, learned.Value().Data())
}

// trueSpiral solves dy/dt = A·y³ from (2, 0) at the times ts.
func trueSpiral(ts []float64) [][2]float64 {
	a := [2][2]float64{{-0.1, 2}, {-2, -0.1}}
	rhs := func(_ float64, y, dy []float64) error {
		c0, c1 := y[0]*y[0]*y[0], y[1]*y[1]*y[1]
		dy[0], dy[1] = c0*a[0][0]+c1*a[1][0], c0*a[0][1]+c1*a[1][1]
		return nil
	}
	sol, _, err := odeblock.Solve(rhs, []float64{2, 0}, ts, odeblock.Options{RTol: 1e-10, ATol: 1e-10})
	check(err)
	out := make([][2]float64, len(ts))
	for i, y := range sol {
		out[i] = [2]float64{y[0], y[1]}
	}
	return out
}

// plotSpiral draws the true trajectory and the learned one (flat [n, 2]).
func plotSpiral(path string, truth [][2]float64, learned []float64) error {
	p := plot.New()
	p.Title.Text = "Spiral dy/dt = A·y³: true and learned"
	p.X.Label.Text, p.Y.Label.Text = "y₁", "y₂"
	tr, ln := make(plotter.XYs, len(truth)), make(plotter.XYs, len(truth))
	for i, y := range truth {
		tr[i] = plotter.XY{X: y[0], Y: y[1]}
		ln[i] = plotter.XY{X: learned[2*i], Y: learned[2*i+1]}
	}
	for i, s := range []plotter.XYs{tr, ln} {
		l, err := plotter.NewLine(s)
		if err != nil {
			return err
		}
		l.Width = vg.Points(1.5)
		l.Color = []color.Color{color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}}[i]
		if i == 1 {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(l)
		p.Legend.Add([]string{"true", "learned"}[i], l)
	}
	p.Legend.Top, p.Legend.Left = true, true // in the spiral's empty middle
	p.Legend.XOffs, p.Legend.YOffs = 2.1*vg.Inch, -2.2*vg.Inch
	return p.Save(5*vg.Inch, 5*vg.Inch, path)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "spiral:", err)
		os.Exit(1)
	}
}
