package models_test

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/models"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// A latent ODE's encoder: a GRU-ODE-RNN run backwards in time over two
// irregularly sampled series of one channel. Its last state, at the first
// time, is what a head maps to q(z0).
func ExampleODERNN() {
	series := []data.Series{
		{Times: []float64{0, 0.4, 1.5}, Values: []float64{0.1, 0.5, -0.2}, C: 1},
		{Times: []float64{0.4, 0.9}, Values: []float64{0.3, 0.7}, C: 1},
	}
	b, err := data.NewSeriesBatch[float32](series)
	if err != nil {
		panic(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const hidden = 8
	cell := layers.NewGRUCell[float32](rng, 2, hidden) // the value and its mask
	gruode := models.NewGRUODE[float32](rng, hidden)
	// Both name a parameter weight_hh: give them paths, as a state dict.
	layers.Prefix("cell", cell)
	layers.Prefix("ode", gruode)
	enc := &models.ODERNN[float32]{
		Cell: cell,
		ODE: &odeblock.Block[float32]{
			Dynamics: gruode,
			Solver:   odeblock.Options{RTol: 1e-4, ATol: 1e-5},
			Mode:     odeblock.Adjoint{},
		},
	}
	tp := autograd.NewTape(tensor.EngineFor[float32](tensor.Default()))
	out, err := enc.Run(tp, b, autograd.Var[float32]{}, true) // from zeros at t = 1.5, backwards
	if err != nil {
		panic(err)
	}
	fmt.Println("times:", b.Times)
	fmt.Println("states:", out.States.Shape(), "last:", out.Last.Shape())
	var names []string
	for _, p := range enc.Params() {
		names = append(names, p.Name)
	}
	fmt.Println(strings.Join(names, " "))
	// Output:
	// times: [0 0.4 0.9 1.5]
	// states: [4 2 8] last: [2 8]
	// cell.weight_ih cell.weight_hh cell.bias_ih cell.bias_hh ode.weight_hh ode.bias_hh
}
