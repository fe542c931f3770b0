// Program convadam trains a small image classifier that mixes ordinary
// layers with an AdamNODE block for a few steps. One flag switches how the
// block's gradient is computed; the model code does not change.
//
//	go run ./examples/convadam -mode adjoint
//	go run ./examples/convadam -mode checkpoint -steps 20
//
// It reads Fashion-MNIST from Debian's dataset-fashion-mnist when installed,
// and otherwise trains on random images (the loss still falls: the model
// memorises the batch).
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
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
	dyn := odeblock.NewAdamNODE[float32](f, -5, 5, odeblock.ScaleSoftplus)
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

// loss records the model's cross-entropy on a batch.
func (m *model) loss(tp *autograd.Tape[float32], x *tensor.Tensor[float32], labels []int) (autograd.Var[float32], error) {
	s := autograd.ReLU(m.stem.Forward(tp, tp.Const(x)))
	parts := autograd.Split(s, 1, m.c, m.c)
	z, err := m.block.Forward(tp, odeblock.AdamInitialState(parts[0], parts[1]))
	if err != nil {
		return autograd.Var[float32]{}, err
	}
	h := odeblock.Part(z, 0, 3)
	return layers.SoftmaxCrossEntropy(m.head.Forward(tp, autograd.Flatten(h)), labels), nil
}

func main() {
	mode := flag.String("mode", "adjoint", "gradient mode: adjoint, backprop or checkpoint")
	steps := flag.Int("steps", 10, "training steps")
	batch := flag.Int("batch", 16, "batch size")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	gm, err := odeblock.ParseGradMode(*mode)
	if err != nil || *steps < 1 || *batch < 1 {
		fmt.Fprintln(os.Stderr, "convadam: want -mode adjoint|backprop|checkpoint, -steps ≥ 1, -batch ≥ 1")
		os.Exit(2)
	}

	rng := rand.New(rand.NewPCG(*seed, 1))
	images, err := data.LoadFashionMNIST(data.FashionMNISTDir, data.Train)
	var loader *data.Loader
	if err == nil {
		loader, err = data.NewLoader(images, data.LoaderOptions{BatchSize: *batch, Shuffle: true, Seed: *seed, Subset: *batch * *steps})
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "convadam: no Fashion-MNIST (%v); training on random images\n", err)
	}
	const side = 28
	m := newModel(rng, 4, 16, side, gm)
	params := m.params()
	opt := optim.NewAdam(params, optim.AdamDefaults())
	tp := autograd.NewTape(tensor.EngineFor[float32](tensor.Default()))

	step := func(i int, x *tensor.Tensor[float32], labels []int) error {
		start := time.Now()
		tp.Reset()
		opt.ZeroGrad()
		l, err := m.loss(tp, x, labels)
		if err != nil {
			return err
		}
		loss := l.Item()
		if err := tp.Backward(l); err != nil {
			return err
		}
		if _, err := optim.ClipGradNorm(params, 10); err != nil {
			return err
		}
		opt.Step()
		st := m.block.Stats()
		fmt.Printf("step %2d  loss %.4f  NFE %d forward / %d backward  %v (%s)\n", i, loss, st.Forward.NFE, st.Backward.NFE, time.Since(start).Round(time.Millisecond), gm)
		return nil
	}

	if loader != nil {
		i := 0
		for b, err := range loader.Epoch(context.Background(), 0) {
			if err != nil {
				fmt.Fprintln(os.Stderr, "convadam:", err)
				os.Exit(1)
			}
			if err := step(i, b.X, b.Labels); err != nil {
				fmt.Fprintln(os.Stderr, "convadam:", err)
				os.Exit(1)
			}
			i++
		}
		return
	}
	x := tensor.RandU[float32](rng, 0, 1, *batch, 1, side, side)
	labels := make([]int, *batch)
	for i := range labels {
		labels[i] = rng.IntN(10)
	}
	for i := range *steps {
		if err := step(i, x, labels); err != nil {
			fmt.Fprintln(os.Stderr, "convadam:", err)
			os.Exit(1)
		}
	}
}
