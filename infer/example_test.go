package infer_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/infer"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// A latent ODE's decoder (as in examples/latentode: the latent path from
// z0 by an ODE block's Trajectory, a small MLP from each latent state to
// an observation) served from eight goroutines at once. build stands for
// a model made from its configuration; the pool binds its parameters to
// the trained model's.
func ExamplePool() {
	const latent, hidden = 4, 20
	times := []float64{0, 0.5, 1, 1.5, 2}
	build := func() (*infer.Func[float64], error) {
		rng := rand.New(rand.NewPCG(1, 2))
		field := layers.NewSequential[float64](layers.TimeConcat[float64]{},
			layers.NewLinear[float64](rng, latent+1, hidden), layers.Tanh[float64]{}, layers.NewLinear[float64](rng, hidden, latent))
		layers.Prefix("f", field)
		dec := layers.NewSequential[float64](layers.NewLinear[float64](rng, latent, hidden), layers.ReLU[float64]{}, layers.NewLinear[float64](rng, hidden, 1))
		layers.Prefix("dec", dec)
		block := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Times: times,
			Solver: odeblock.Options{RTol: 1e-6, ATol: 1e-6}}
		return &infer.Func[float64]{
			Fn: func(tp *autograd.Tape[float64], z0 autograd.Var[float64]) (autograd.Var[float64], error) {
				z, err := block.Trajectory(tp, z0) // [len(times), B, latent]
				if err != nil {
					return z, err
				}
				return autograd.Permute(dec.Forward(tp, z), 1, 0, 2), nil // [B, len(times), 1]
			},
			Parameters: layers.ParamsOf[float64](field, dec),
			Blocks:     []*odeblock.Block[float64]{block},
		}, nil
	}
	trained, err := build() // in a program: the model trained or loaded
	if err != nil {
		fmt.Println(err)
		return
	}
	pool, err := infer.New[float64](trained, build, infer.Options{Replicas: 4, Input: []int{latent}})
	if err != nil {
		fmt.Println(err)
		return
	}

	z0 := tensor.FromSlice([]float64{0.5, -1, 0.25, 2}, 1, latent)
	want, err := pool.Predict(context.Background(), z0)
	if err != nil {
		fmt.Println(err)
		return
	}
	var wg sync.WaitGroup
	same := make([]bool, 8)
	for g := range same {
		wg.Add(1)
		go func() {
			defer wg.Done()
			y, err := pool.Predict(context.Background(), z0)
			same[g] = err == nil && slices.Equal(y.ReadData(), want.ReadData())
		}()
	}
	wg.Wait()
	fmt.Println("decoded:", want.Shape())
	fmt.Println("every goroutine's answer the same:", !slices.Contains(same, false))

	_, err = pool.Predict(context.Background(), tensor.New[float64](2, 3))
	fmt.Println(err)
	// Output:
	// decoded: [1 5 1]
	// every goroutine's answer the same: true
	// infer: input of shape [2 3], want [B 4] (a batch of rows of shape [4])
}
