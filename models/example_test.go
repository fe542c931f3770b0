package models_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/models"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// The paper's MNIST HBNODE, shrunk for a quick look: build it from the
// paper's configuration, classify a batch, and see its parameters.
func Example() {
	cfg := models.Paper(models.HBNODE, models.MNIST)
	cfg.NHid = 8                     // the paper's is 50
	cfg.Mode = odeblock.Checkpoint{} // exact gradients of the discrete solve
	m, err := models.New[float32](rand.New(rand.NewPCG(1, 2)), cfg)
	if err != nil {
		panic(err)
	}
	x := tensor.RandU[float32](rand.New(rand.NewPCG(3, 4)), 0, 1, 2, 1, 28, 28)
	tp := autograd.NewTape(tensor.EngineFor[float32](tensor.Default()))
	scores, err := m.Forward(tp, tp.Const(x))
	if err != nil {
		panic(err)
	}
	fmt.Println("scores:", scores.Shape())
	fmt.Printf("parameters: %+v\n", m.Counts())
	fmt.Println("first and last:", m.Params()[0].Name, m.Params()[len(m.Params())-1].Name)
	// Output:
	// scores: [2 10]
	// parameters: {Init:681 Field:762 Scalars:1 Head:39210 Total:40654}
	// first and last: init.conv1.weight head.bias
}
