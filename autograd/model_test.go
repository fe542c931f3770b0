package autograd_test

import (
	"math/rand/v2"
	"testing"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

func TestMLPGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	m := newMLP[float64](rng, 6, 8, 4)
	x := tensor.RandN[float64](rng, 0, 1, 5, 6)
	labels := []int{3, 0, 1, 1, 2}
	f := func(tp *ag.Tape[float64]) ag.Var[float64] {
		return ag.SoftmaxCrossEntropy(m.forward(tp, tp.Const(x)), labels)
	}
	rep, err := ag.CheckGradients(f, m.params(), ag.GradCheckOptions{AbsTol: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep)
}

// convNet is a small time-dependent conv net with a linear head:
// conv3x3(cat(x, t)) · relu · conv1x1(cat(·, t)) · leaky relu · flatten ·
// linear, trained with cross-entropy.
type convNet[T tensor.Float] struct {
	w1, b1, w2, b2, wl, bl *ag.Param[T]
}

func newConvNet[T tensor.Float](rng *rand.Rand, c, hidden, hw, classes int) *convNet[T] {
	return &convNet[T]{
		w1: ag.NewParam("conv1.w", tensor.RandN[T](rng, 0, 0.4, hidden, c+1, 3, 3)),
		b1: ag.NewParam("conv1.b", tensor.RandN[T](rng, 0, 0.4, hidden)),
		w2: ag.NewParam("conv2.w", tensor.RandN[T](rng, 0, 0.4, c, hidden+1, 1, 1)),
		b2: ag.NewParam("conv2.b", tensor.RandN[T](rng, 0, 0.4, c)),
		wl: ag.NewParam("head.w", tensor.RandN[T](rng, 0, 0.4, classes, c*hw*hw)),
		bl: ag.NewParam("head.b", tensor.RandN[T](rng, 0, 0.4, classes)),
	}
}

func (m *convNet[T]) params() []*ag.Param[T] {
	return []*ag.Param[T]{m.w1, m.b1, m.w2, m.b2, m.wl, m.bl}
}

func (m *convNet[T]) loss(tp *ag.Tape[T], x ag.Var[T], tv T, labels []int) ag.Var[T] {
	h := ag.Conv2D(ag.ConcatTime(x, tv), tp.Param(m.w1), tp.Param(m.b1), tensor.ConvParams{Pad: 1})
	h = ag.ReLU(h)
	h = ag.Conv2D(ag.ConcatTime(h, tv), tp.Param(m.w2), tp.Param(m.b2), tensor.ConvParams{})
	h = ag.Add(ag.LeakyReLU(h, 0.3), x) // residual: x is used twice
	return ag.SoftmaxCrossEntropy(ag.Linear(ag.Flatten(h), tp.Param(m.wl), tp.Param(m.bl)), labels)
}

func TestConvNetGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	m := newConvNet[float64](rng, 2, 3, 5, 4)
	x := ag.NewParam("x", tensor.RandN[float64](rng, 0, 1, 3, 2, 5, 5))
	labels := []int{1, 3, 0}
	f := func(tp *ag.Tape[float64]) ag.Var[float64] { return m.loss(tp, tp.Param(x), 0.4, labels) }
	rep, err := ag.CheckGradients(f, append(m.params(), x), ag.GradCheckOptions{AbsTol: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep)

	// The same model in float32 gives the same loss and gradients within
	// float32 precision.
	m32 := &convNet[float32]{}
	ps64, ps32 := m.params(), []**ag.Param[float32]{&m32.w1, &m32.b1, &m32.w2, &m32.b2, &m32.wl, &m32.bl}
	for i, p := range ps64 {
		*ps32[i] = ag.NewParam(p.Name, convert[float32](p.Value))
	}
	tp32, tp64 := ag.NewTape(eng32()), ag.NewTape(eng64())
	ag.ZeroGrads(ps64)
	l32 := m32.loss(tp32, tp32.Const(convert[float32](x.Value)), 0.4, labels)
	l64 := m.loss(tp64, tp64.Const(x.Value), 0.4, labels)
	tp32.Backward(l32)
	tp64.Backward(l64)
	if d, s := maxAbsDiff(l32.Value(), l64.Value()); d > 1e-5*max(1, s) {
		t.Fatalf("float32 loss %v, float64 loss %v", l32.Item(), l64.Item())
	}
	for i, p := range ps64 {
		if d, s := maxAbsDiff((*ps32[i]).Grad, p.Grad); d > 1e-5*max(1, s) {
			t.Fatalf("float32 gradient of %s differs by %.3g (scale %.3g)", p.Name, d, s)
		}
	}
}
