// Program customode trains a classifier with an ODE block of the user's
// own dynamics (h' = v, v' = f(h, t) − k·v, k learned) between a conv stem
// and a pooled head, then loads its checkpoint into a fresh model:
//
//	go run ./examples/customode -mode checkpoint -n 640   (Fashion-MNIST, else random images)
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
	"github.com/adamnode/adamnode/train"
)

// damped is the user's dynamics on z = (h, v), k = softplus(KRaw).
type damped struct {
	F    odeblock.Field[float32]
	KRaw *ag.Param[float32]
}

func (d *damped) Eval(tp *ag.Tape[float32], t float64, z ag.Var[float32]) ag.Var[float32] {
	h, v := odeblock.Part(z, 0, 2), odeblock.Part(z, 1, 2)
	return odeblock.Stack(v, ag.Sub(d.F.ForwardT(tp, t, h), ag.MulScalar(v, ag.Softplus(tp.Param(d.KRaw)))))
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

// Forward, Params and Stats make the model a train.Model reporting NFE.
func (m *model) Forward(tp *ag.Tape[float32], x ag.Var[float32]) (ag.Var[float32], error) {
	s := ag.Split(ag.ReLU(m.stem.Forward(tp, x)), 1, 4, 4)
	z, err := m.block.Forward(tp, odeblock.Stack(s[0], s[1]))
	if err != nil {
		return ag.Var[float32]{}, err
	}
	return m.head.Forward(tp, odeblock.Part(z, 0, 2)), nil
}

func (m *model) Params() []*ag.Param[float32] { return m.params }
func (m *model) Stats() odeblock.BlockStats   { return m.block.Stats() }
func (m *model) NFE() (forward, backward int) { return m.block.NFE() }

func main() {
	mode := flag.String("mode", "adjoint", "gradient mode: adjoint, backprop, checkpoint or recursive")
	n := flag.Int("n", 320, "training images (and a quarter as many test images)")
	flag.Parse()
	gm := must(odeblock.ParseGradMode(*mode))
	trainSet, err := data.LoadFashionMNIST(data.FashionMNISTDir, data.Train)
	testSet, err2 := data.LoadFashionMNIST(data.FashionMNISTDir, data.Test)
	if err != nil || err2 != nil {
		fmt.Fprintf(os.Stderr, "customode: no Fashion-MNIST (%v); random images\n", err)
		trainSet, testSet = data.FakeImages(*n, 1, 28, 28, 10, 2), data.FakeImages(*n/4, 1, 28, 28, 10, 3)
	}
	tr := must(data.NewLoader(trainSet, data.LoaderOptions{BatchSize: 32, Shuffle: true, Seed: 1, Subset: *n}))
	te := must(data.NewLoader(testSet, data.LoaderOptions{BatchSize: 64, Subset: *n / 4}))
	m, dir := newModel(1, gm), os.TempDir()
	opt := optim.NewAdam(m.params, optim.AdamDefaults())
	must(train.Run[float32](context.Background(), train.Config{Name: "customode", Dir: dir, Epochs: 2, Log: os.Stdout}, m, opt, tr, te))
	fresh := newModel(99, gm) // other weights, until loaded
	must(layers.LoadCheckpoint(filepath.Join(dir, "customode.safetensors"), fresh.params, optim.NewAdam(fresh.params, optim.AdamDefaults())))
	tp := ag.NewTape(tensor.EngineFor[float32](tensor.Default()))
	for b := range te.Epoch(context.Background(), 0) { // the same loss from both
		for _, mm := range []*model{m, fresh} {
			tp.Reset()
			y := must(mm.Forward(tp, tp.Const(b.X)))
			fmt.Printf("loss on a test batch: %.6f\n", layers.SoftmaxCrossEntropy(y, b.Labels).Item())
		}
		break
	}
}

func must[V any](v V, err error) V {
	if err != nil {
		fmt.Fprintln(os.Stderr, "customode:", err)
		os.Exit(1)
	}
	return v
}
