package odeblock_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// convField is the paper's f in small: cat(h, t) → conv1×1 → tanh → cat t →
// conv3×3 (pad 1) back to c channels.
type convField struct {
	w1, b1, w2, b2 *autograd.Param[float64]
}

func newConvField(rng *rand.Rand, c, hidden int) *convField {
	p := func(n string, s ...int) *autograd.Param[float64] {
		return autograd.NewParam("f."+n, tensor.RandN[float64](rng, 0, 0.3, s...))
	}
	return &convField{w1: p("w1", hidden, c+1, 1, 1), b1: p("b1", hidden), w2: p("w2", c, hidden+1, 3, 3), b2: p("b2", c)}
}

func (f *convField) ForwardT(tp *autograd.Tape[float64], t float64, h autograd.Var[float64]) autograd.Var[float64] {
	z := autograd.Tanh(autograd.Conv2D(autograd.ConcatTime(h, t), tp.Param(f.w1), tp.Param(f.b1), tensor.ConvParams{}))
	return autograd.Conv2D(autograd.ConcatTime(z, t), tp.Param(f.w2), tp.Param(f.b2), tensor.ConvParams{Pad: 1})
}

func (f *convField) Params() []*autograd.Param[float64] {
	return []*autograd.Param[float64]{f.w1, f.b1, f.w2, f.b2}
}

// TestConvModelEndToEnd checks a model that mixes ordinary layers with an
// AdamNODE block (conv stem, ODE block with a conv field and time channels,
// linear head, cross-entropy) against finite differences in every mode.
func TestConvModelEndToEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	const b, c, side, classes = 2, 2, 5, 3
	x := tensor.RandN[float64](rng, 0, 1, b, 1, side, side)
	labels := []int{2, 0}
	stemW := autograd.NewParam("stem.w", tensor.RandN[float64](rng, 0, 0.5, 2*c, 1, 3, 3))
	stemB := autograd.NewParam("stem.b", tensor.RandN[float64](rng, 0, 0.1, 2*c))
	headW := autograd.NewParam("head.w", tensor.RandN[float64](rng, 0, 0.3, classes, c*side*side))
	headB := autograd.NewParam("head.b", tensor.RandN[float64](rng, 0, 0.1, classes))
	dyn := odeblock.NewAdamNODE[float64](newConvField(rng, c, 3), -1, 1, odeblock.ScaleSoftplus)
	params := append([]*autograd.Param[float64]{stemW, stemB, headW, headB}, dyn.Params()...)

	for _, mode := range modes {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			block := &odeblock.Block[float64]{Dynamics: dyn, Mode: mode, Solver: odeblock.Options{RTol: 1e-12, ATol: 1e-12}}
			model := func(tp *autograd.Tape[float64]) autograd.Var[float64] {
				stem := autograd.Conv2D(tp.Const(x), tp.Param(stemW), tp.Param(stemB), tensor.ConvParams{Pad: 1})
				parts := autograd.Split(stem, 1, c, c) // h0 and m0 from the stem's channels
				z, err := block.Forward(tp, odeblock.AdamInitialState(parts[0], parts[1]))
				if err != nil {
					t.Fatal(err)
				}
				h := odeblock.Part(z, 0, 3)
				logits := autograd.Linear(autograd.Flatten(h), tp.Param(headW), tp.Param(headB))
				return autograd.SoftmaxCrossEntropy(logits, labels)
			}
			rep, err := autograd.CheckGradients(model, params, autograd.GradCheckOptions{Step: 1e-5, AbsTol: 1e-7, RelTol: 1e-5, MaxElems: 12})
			if err != nil {
				t.Fatalf("%v\n%v", err, rep)
			}
		})
	}
}
