package train_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/train"
)

// damped is a user's own dynamics: dz/dt = f(z) − 0.1·z, f an MLP.
type damped struct{ f *layers.Sequential[float64] }

func (d damped) Eval(tp *ag.Tape[float64], t float64, z ag.Var[float64]) ag.Var[float64] {
	return ag.Sub(d.f.Forward(tp, z), ag.Scale(z, 0.1))
}
func (d damped) Params() []*ag.Param[float64] { return d.f.Params() }

// paths is a batch: 16 starting points and the true paths from them.
type paths struct{ z0, z *tensor.Tensor[float64] }

// Fit a user's own neural ODE to a rotation dz/dt = (z₂, −z₁), observed
// from random starting points at t = 0.5 and 1, with adjoint gradients.
func ExampleFit() {
	rng := rand.New(rand.NewPCG(1, 2))
	dyn := damped{layers.NewSequential[float64]().Add("fc1", layers.NewLinear[float64](rng, 2, 32)).
		Add("tanh", layers.Tanh[float64]{}).Add("fc2", layers.NewLinear[float64](rng, 32, 2))}
	times := []float64{0.5, 1}
	block := &odeblock.Block[float64]{Dynamics: dyn, Times: append([]float64{0}, times...), Mode: odeblock.Adjoint{}}
	task := &train.Sampled[float64, paths]{Parameters: dyn.Params(), PerEpoch: 50, Counter: block,
		Sample: func(rng *rand.Rand) (paths, error) {
			b := paths{tensor.New[float64](16, 2), tensor.New[float64](len(times)+1, 16, 2)}
			for i := range 16 {
				z1, z2 := rng.NormFloat64(), rng.NormFloat64()
				b.z0.Set(z1, i, 0)
				b.z0.Set(z2, i, 1)
				for k, t := range append([]float64{0}, times...) {
					b.z.Set(z1*math.Cos(t)+z2*math.Sin(t), k, i, 0)
					b.z.Set(z2*math.Cos(t)-z1*math.Sin(t), k, i, 1)
				}
			}
			return b, nil
		},
		Objective: func(tp *ag.Tape[float64], b paths) (train.Loss[float64], error) {
			z, err := block.Trajectory(tp, tp.Const(b.z0))
			return train.Loss[float64]{Value: ag.Mean(ag.Square(ag.Sub(z, tp.Const(b.z))))}, err
		}}
	opt := optim.NewAdam(dyn.Params(), optim.AdamDefaults().WithLR(1e-2))
	res, err := train.Fit(context.Background(), train.Config{Name: "rotation", Epochs: 4, Quiet: true}, task, opt)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d epochs; the loss fell tenfold: %t\n", len(res.Rows), res.Rows[3].Loss < res.Rows[0].Loss/10)
	// Output:
	// 4 epochs; the loss fell tenfold: true
}
