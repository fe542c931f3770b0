// Program convadam trains a small image classifier that mixes ordinary
// layers with an AdamNODE block for a few steps. One flag switches how the
// block's gradient is computed; the model code does not change.
//
//	go run ./examples/convadam -mode adjoint
//	go run ./examples/convadam -mode checkpoint -steps 20
//
// It reads Fashion-MNIST from Debian's dataset-fashion-mnist when installed,
// and otherwise trains on random images; package train runs the loop.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/cuda"
	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/train"
)

// model is conv stem → AdamNODE block (conv field with time channels) →
// linear head. The stem's 2c channels become h0 and m0; v0 = m0².
type model struct {
	stem  *layers.Conv2D[float32]
	block *odeblock.Block[float32]
	dyn   *odeblock.AdamNODE[float32]
	head  *layers.Linear[float32]
	c     int
}

func newModel(rng *rand.Rand, c, hidden, side int, mode odeblock.GradMode) *model {
	stem := layers.NewConv2D[float32](rng, 1, 2*c, 3, tensor.ConvParams{Pad: 1})
	layers.Prefix("stem", stem)
	f := layers.NewSequential[float32]().
		Add("t1", layers.TimeConcat[float32]{}).
		Add("conv1", layers.NewConv2D[float32](rng, c+1, hidden, 1, tensor.ConvParams{})).
		Add("relu1", layers.ReLU[float32]{}).
		Add("t2", layers.TimeConcat[float32]{}).
		Add("conv2", layers.NewConv2D[float32](rng, hidden+1, c, 3, tensor.ConvParams{Pad: 1}))
	layers.Prefix("f", f)
	s := odeblock.PaperScalars() // the authors' r1, r2 and s(v)
	dyn := odeblock.NewAdamNODE[float32](f, s.R1, s.R2, s.Scale)
	head := layers.NewLinear[float32](rng, c*side*side, 10)
	layers.Prefix("head", head)
	return &model{
		stem: stem, dyn: dyn, head: head, c: c,
		block: &odeblock.Block[float32]{Dynamics: dyn, Mode: mode, Solver: odeblock.Options{RTol: 1e-3, ATol: 1e-3}},
	}
}

func (m *model) params() []*autograd.Param[float32] {
	ps := append(m.stem.Params(), m.dyn.Params()...)
	return append(ps, m.head.Params()...)
}

// Forward records the class scores of images x; with Params and Stats
// the model is a train.Model.
func (m *model) Forward(tp *autograd.Tape[float32], x autograd.Var[float32]) (autograd.Var[float32], error) {
	s := autograd.ReLU(m.stem.Forward(tp, x))
	parts := autograd.Split(s, 1, m.c, m.c)
	z, err := m.block.Forward(tp, odeblock.AdamInitialState(parts[0], parts[1]))
	if err != nil {
		return autograd.Var[float32]{}, err
	}
	return m.head.Forward(tp, autograd.Flatten(odeblock.Part(z, 0, 3))), nil
}

func (m *model) Params() []*autograd.Param[float32] { return m.params() }
func (m *model) Stats() odeblock.BlockStats         { return m.block.Stats() }
func (m *model) NFE() (forward, backward int)       { return m.block.NFE() }

func main() {
	mode := flag.String("mode", "adjoint", "gradient mode: "+strings.Join(odeblock.GradModeNames(), ", "))
	steps := flag.Int("steps", 10, "training steps")
	batch := flag.Int("batch", 16, "batch size")
	seed := flag.Uint64("seed", 1, "random seed")
	device := flag.String("device", "cpu", "cpu or cuda (GEMM on cuBLAS)")
	flag.Parse()
	var backend tensor.Backend // nil: the CPU
	if *device == "cuda" {
		var err error
		if backend, err = cuda.Backend(0); err != nil {
			fmt.Fprintln(os.Stderr, "convadam:", err)
			os.Exit(1)
		}
	}
	gm, err := odeblock.ParseGradMode(*mode)
	if err != nil || *steps < 1 || *batch < 1 {
		fmt.Fprintln(os.Stderr, "convadam: want -mode", strings.Join(odeblock.GradModeNames(), "|"), "-steps ≥ 1, -batch ≥ 1")
		os.Exit(2)
	}
	n := *batch * *steps
	trainSet, err := data.LoadFashionMNIST(data.FashionMNISTDir, data.Train)
	testSet, err2 := data.LoadFashionMNIST(data.FashionMNISTDir, data.Test)
	if err != nil || err2 != nil {
		fmt.Fprintf(os.Stderr, "convadam: no Fashion-MNIST (%v); training on random images\n", err)
		trainSet, testSet = data.FakeImages(n, 1, 28, 28, 10, *seed), data.FakeImages(*batch, 1, 28, 28, 10, *seed+1)
	}
	tr, err := data.NewLoader(trainSet, data.LoaderOptions{BatchSize: *batch, Shuffle: true, Seed: *seed, Subset: n})
	if err == nil {
		var te *data.Loader
		te, err = data.NewLoader(testSet, data.LoaderOptions{BatchSize: *batch, Subset: *batch})
		m := newModel(rand.New(rand.NewPCG(*seed, 1)), 4, 16, 28, gm)
		opt := optim.NewAdam(m.params(), optim.AdamDefaults())
		if err == nil {
			// One epoch of the steps, gradients clipped at 10; the
			// progress bar shows loss and NFE per step.
			_, err = train.Run[float32](context.Background(), train.Config{Name: "convadam", Epochs: 1, Clip: 10, Log: os.Stdout, Backend: backend}, m, opt, tr, te)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "convadam:", err)
		os.Exit(1)
	}
}
