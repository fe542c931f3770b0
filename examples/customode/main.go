// Program customode trains an image classifier whose middle is an ODE
// block with the user's own second-order dynamics — a damped oscillator,
// h' = v, v' = f(h, t) − k·v with a learned damping k — between a conv
// stem and a pooled linear head, then saves it, loads it into a fresh
// model and checks that both give the same loss.
//
//	go run ./examples/customode -mode checkpoint -steps 20
//
// It reads Fashion-MNIST from Debian's dataset-fashion-mnist when
// installed, and otherwise trains on random images.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
)

// damped is the user's dynamics on z = (h, v): h' = v, v' = f(h, t) − k·v,
// with k = softplus(KRaw).
type damped struct {
	F    odeblock.Field[float32]
	KRaw *ag.Param[float32]
}

func (d *damped) Eval(tp *ag.Tape[float32], t float64, z ag.Var[float32]) ag.Var[float32] {
	h, v := odeblock.Part(z, 0, 2), odeblock.Part(z, 1, 2)
	k := ag.Softplus(tp.Param(d.KRaw))
	return odeblock.Stack(v, ag.Sub(d.F.ForwardT(tp, t, h), ag.MulScalar(v, k)))
}

func (d *damped) Params() []*ag.Param[float32] { return append(d.F.Params(), d.KRaw) }

type model struct {
	stem, head *layers.Sequential[float32]
	block      *odeblock.Block[float32]
	params     []*ag.Param[float32]
}

func newModel(seed uint64, mode odeblock.GradMode) *model {
	const c = 4
	rng := rand.New(rand.NewPCG(seed, 1))
	stem := layers.NewSequential[float32]().
		Add("conv", layers.NewConv2D[float32](rng, 1, 2*c, 3, tensor.ConvParams{Pad: 1, Stride: 2})).
		Add("norm", layers.NewGroupNorm[float32](2, 2*c))
	f := layers.NewSequential[float32]().
		Add("t", layers.TimeConcat[float32]{}).
		Add("conv1", layers.NewConv2D[float32](rng, c+1, 16, 3, tensor.ConvParams{Pad: 1})).
		Add("act", layers.Tanh[float32]{}).
		Add("conv2", layers.NewConv2D[float32](rng, 16, c, 3, tensor.ConvParams{Pad: 1}))
	dyn := &damped{F: f, KRaw: ag.NewParam("k", tensor.Full[float32](0.5, 1))}
	head := layers.NewSequential[float32]().
		Add("pool", layers.AdaptiveAvgPool2D[float32]{H: 4, W: 4}).
		Add("flat", layers.Flatten[float32]{}).
		Add("fc", layers.NewLinear[float32](rng, c*16, 10))
	layers.Prefix("stem", stem)
	layers.Prefix("ode", dyn)
	layers.Prefix("head", head)
	m := &model{stem: stem, head: head,
		block: &odeblock.Block[float32]{Dynamics: dyn, Mode: mode, Solver: odeblock.Options{RTol: 1e-3, ATol: 1e-3}}}
	m.params = append(append(stem.Params(), dyn.Params()...), head.Params()...)
	return m
}

func (m *model) loss(tp *ag.Tape[float32], b *data.Batch) (ag.Var[float32], error) {
	s := ag.Split(ag.ReLU(m.stem.Forward(tp, tp.Const(b.X))), 1, 4, 4)
	z, err := m.block.Forward(tp, odeblock.Stack(s[0], s[1]))
	if err != nil {
		return ag.Var[float32]{}, err
	}
	return layers.SoftmaxCrossEntropy(m.head.Forward(tp, odeblock.Part(z, 0, 2)), b.Labels), nil
}

func main() {
	mode := flag.String("mode", "adjoint", "gradient mode: adjoint, backprop, checkpoint or recursive")
	steps := flag.Int("steps", 10, "training steps (batches of 32)")
	flag.Parse()
	gm, err := odeblock.ParseGradMode(*mode)
	if err != nil || *steps < 1 {
		fmt.Fprintln(os.Stderr, "customode: bad -mode or -steps:", err)
		os.Exit(2)
	}
	images, err := data.LoadFashionMNIST(data.FashionMNISTDir, data.Train)
	if err != nil {
		fmt.Fprintf(os.Stderr, "customode: no Fashion-MNIST (%v); random images\n", err)
		images = data.FakeImages(32**steps, 1, 28, 28, 10, 2)
	}
	loader, err := data.NewLoader(images, data.LoaderOptions{BatchSize: 32, Shuffle: true, Seed: 1, Subset: 32 * *steps})
	check(err)
	m := newModel(1, gm)
	opt := optim.NewAdam(m.params, optim.AdamDefaults())
	tp := ag.NewTape(tensor.EngineFor[float32](tensor.Default()))
	var last *data.Batch
	for b, err := range loader.Epoch(context.Background(), 0) {
		check(err)
		tp.Reset()
		l, err := m.loss(tp, b)
		check(err)
		check(tp.Backward(l))
		opt.Step()
		opt.ZeroGrad()
		st := m.block.Stats()
		fmt.Printf("loss %.4f  NFE %d + %d (%v)\n", l.Item(), st.Forward.NFE, st.Backward.NFE, gm)
		last = b
	}
	path := filepath.Join(os.TempDir(), "customode.safetensors")
	check(layers.SaveCheckpoint(path, m.params, opt, map[string]string{"mode": *mode}))
	fresh := newModel(99, gm) // other weights, until loaded
	_, err = layers.LoadCheckpoint(path, fresh.params, optim.NewAdam(fresh.params, optim.AdamDefaults()))
	check(err)
	tp.SetNoGrad(true)
	for _, mm := range []*model{m, fresh} {
		tp.Reset()
		l, err := mm.loss(tp, last)
		check(err)
		fmt.Printf("loss on the last batch: %.6f\n", l.Item())
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "customode:", err)
		os.Exit(1)
	}
}
