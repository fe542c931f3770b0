package autograd_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"weak"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

func eng64() tensor.Engine[float64] { return tensor.EngineFor[float64](tensor.Default()) }
func eng32() tensor.Engine[float32] { return tensor.EngineFor[float32](tensor.Default()) }

// mlp is a 2-layer perceptron, generic so that the float64 gradient checks
// run the code that trains in float32.
type mlp[T tensor.Float] struct {
	w1, b1, w2, b2 *ag.Param[T]
}

func newMLP[T tensor.Float](rng *rand.Rand, in, hidden, out int) *mlp[T] {
	return &mlp[T]{
		w1: ag.NewParam("w1", tensor.RandN[T](rng, 0, 0.5, hidden, in)),
		b1: ag.NewParam("b1", tensor.RandN[T](rng, 0, 0.5, hidden)),
		w2: ag.NewParam("w2", tensor.RandN[T](rng, 0, 0.5, out, hidden)),
		b2: ag.NewParam("b2", tensor.RandN[T](rng, 0, 0.5, out)),
	}
}

func (m *mlp[T]) params() []*ag.Param[T] { return []*ag.Param[T]{m.w1, m.b1, m.w2, m.b2} }

func (m *mlp[T]) forward(tp *ag.Tape[T], x ag.Var[T]) ag.Var[T] {
	h := ag.Tanh(ag.Linear(x, tp.Param(m.w1), tp.Param(m.b1)))
	return ag.Linear(h, tp.Param(m.w2), tp.Param(m.b2))
}

// mustPanic runs f and returns the panic message, failing unless it panics.
func mustPanic(t *testing.T, f func()) (msg string) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil {
			t.Fatal("did not panic")
		}
		if err, ok := r.(error); ok {
			msg = err.Error()
		} else {
			t.Fatalf("panicked with %T %v, want an error", r, r)
		}
	}()
	f()
	return ""
}

func TestGradientsAccumulateOverPasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := newMLP[float64](rng, 3, 4, 2)
	x := tensor.RandN[float64](rng, 0, 1, 5, 3)
	labels := []int{0, 1, 1, 0, 1}
	tp := ag.NewTape(eng64())
	pass := func() {
		tp.Reset()
		tp.Backward(ag.SoftmaxCrossEntropy(m.forward(tp, tp.Const(x)), labels))
	}
	pass()
	var once []*tensor.Tensor[float64]
	for _, p := range m.params() {
		once = append(once, p.Grad.Clone())
	}
	pass()
	for i, p := range m.params() {
		for k, g := range p.Grad.Data() {
			if want := 2 * once[i].Data()[k]; math.Abs(g-want) > 1e-15*math.Abs(want) {
				t.Fatalf("%s[%d] after two passes = %v, want %v", p.Name, k, g, want)
			}
		}
	}
	// A fresh tape accumulates into the same parameters.
	tp2 := ag.NewTape(eng64())
	tp2.Backward(ag.SoftmaxCrossEntropy(m.forward(tp2, tp2.Const(x)), labels))
	if g, want := m.w1.Grad.Data()[0], 3*once[0].Data()[0]; g-want > 1e-15 || want-g > 1e-15 {
		t.Fatalf("after a third pass on a new tape w1[0] = %v, want %v", g, want)
	}
	ag.ZeroGrads(m.params())
	for _, p := range m.params() {
		if p.Grad.Norm2() != 0 {
			t.Fatalf("%s not zeroed", p.Name)
		}
	}
}

func TestNoGradRecordsNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := newMLP[float32](rng, 3, 4, 2)
	tp := ag.NewTape(eng32())
	if was := tp.SetNoGrad(true); was {
		t.Fatal("a new tape is in no-grad mode")
	}
	called := false
	x := tp.Input(tensor.RandN[float32](rng, 0, 1, 2, 3))
	y := m.forward(tp, x)
	y = ag.Custom("c", y.Value().Clone(), func(gy *tensor.Tensor[float32]) ([]*tensor.Tensor[float32], error) {
		called = true
		return []*tensor.Tensor[float32]{gy}, nil
	}, y)
	loss := ag.Mean(ag.Square(y))
	if tp.Len() != 0 {
		t.Fatalf("no-grad tape recorded %d ops", tp.Len())
	}
	if x.RequiresGrad() || y.RequiresGrad() || loss.RequiresGrad() {
		t.Fatal("a Var requires a gradient in no-grad mode")
	}
	if g := ag.GraphRefs(tp); g != 0 {
		t.Fatalf("no-grad tape holds %d graph references", g)
	}
	if msg := mustPanic(t, func() { tp.Backward(loss) }); !strings.Contains(msg, "no-grad") {
		t.Fatalf("Backward in no-grad mode: %q", msg)
	}
	if called {
		t.Fatal("custom backward ran")
	}
	for _, p := range m.params() {
		if p.Grad.Norm2() != 0 {
			t.Fatalf("%s has a gradient", p.Name)
		}
	}
	// Values are computed as with gradients on.
	tp2 := ag.NewTape(eng32())
	y2 := m.forward(tp2, tp2.Const(x.Value()))
	if d, _ := maxAbsDiff(y2.Value(), m.forward(tp, x).Value()); d != 0 {
		t.Fatalf("no-grad value differs by %v", d)
	}
	// Turning it off in the middle of a pass stops gradients there.
	tp3 := ag.NewTape(eng32())
	h := m.forward(tp3, tp3.Const(x.Value()))
	tp3.SetNoGrad(true)
	frozen := ag.Scale(h, 2)
	tp3.SetNoGrad(false)
	if frozen.RequiresGrad() || !h.RequiresGrad() {
		t.Fatal("no-grad section did not stop gradients")
	}
}

// holder returns a custom backward that keeps big alive, and a weak pointer
// to big.
func holder(n int) (func(gy *tensor.Tensor[float64]) ([]*tensor.Tensor[float64], error), weak.Pointer[[]float64]) {
	big := make([]float64, n)
	wp := weak.Make(&big)
	return func(gy *tensor.Tensor[float64]) ([]*tensor.Tensor[float64], error) {
		gy2 := gy.Clone()
		gy2.Data()[0] += big[0]
		return []*tensor.Tensor[float64]{gy2}, nil
	}, wp
}

func TestTapeReleasedAfterBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	m := newMLP[float64](rng, 3, 4, 2)
	x := tensor.RandN[float64](rng, 0, 1, 2, 3)
	tp := ag.NewTape(eng64())
	y := m.forward(tp, tp.Input(x))
	bw, wp := holder(1 << 16)
	y = ag.Custom("holder", y.Value().Clone(), bw, y)
	bw = nil
	loss := ag.Sum(ag.Concat(1, ag.Split(y, 1, 1, 1)...))
	if tp.Len() == 0 || ag.GraphRefs(tp) == 0 {
		t.Fatal("nothing recorded")
	}
	tp.Backward(loss)
	if n := tp.Len(); n != 0 {
		t.Fatalf("Len after Backward = %d", n)
	}
	if n := ag.GraphRefs(tp); n != 0 {
		t.Fatalf("%d graph references left after Backward", n)
	}
	runtime.GC()
	runtime.GC()
	if wp.Value() != nil {
		t.Fatal("the custom node's closure is still reachable after Backward")
	}
	// The loss is still readable; a second Backward or a new op is refused.
	_ = loss.Item()
	if msg := mustPanic(t, func() { tp.Backward(loss) }); !strings.Contains(msg, "already ran Backward") {
		t.Fatalf("second Backward: %q", msg)
	}
	if msg := mustPanic(t, func() { ag.Neg(loss) }); !strings.Contains(msg, "Reset") {
		t.Fatalf("op after Backward: %q", msg)
	}
	// After Reset the slots are emptied and old Vars are refused.
	tp.Reset()
	if ag.Slots(tp) != 0 {
		t.Fatal("Reset left slots in use")
	}
	if msg := mustPanic(t, func() { ag.Neg(loss) }); !strings.Contains(msg, "earlier pass") {
		t.Fatalf("stale Var: %q", msg)
	}
	tp.Release()
	if msg := mustPanic(t, func() { ag.Neg(y) }); !strings.Contains(msg, "earlier pass") {
		t.Fatalf("stale Var after Release: %q", msg)
	}
}

func TestMisusePanics(t *testing.T) {
	x := tensor.Full[float64](1, 2, 2)
	a, b := ag.NewTape(eng64()), ag.NewTape(eng64())
	if msg := mustPanic(t, func() { ag.Add(a.Input(x), b.Input(x)) }); !strings.Contains(msg, "different tapes") {
		t.Fatalf("mixing tapes: %q", msg)
	}
	c := ag.NewTape(eng64())
	if msg := mustPanic(t, func() { c.Backward(ag.Sum(c.Const(x))) }); !strings.Contains(msg, "requires no gradient") {
		t.Fatalf("constant loss: %q", msg)
	}
	d := ag.NewTape(eng64())
	msg := mustPanic(t, func() { d.Backward(ag.Square(d.Input(x))) })
	var se *tensor.ShapeError
	if !strings.Contains(msg, "[2 2]") || !strings.Contains(msg, "BackwardWith") {
		t.Fatalf("non-scalar loss: %q", msg)
	}
	e := ag.NewTape(eng64())
	y := e.Input(x)
	z := ag.Custom("recorder", x.Clone(), func(gy *tensor.Tensor[float64]) ([]*tensor.Tensor[float64], error) {
		ag.Neg(y) // records on the tape whose Backward is running
		return []*tensor.Tensor[float64]{gy}, nil
	}, y)
	if msg := mustPanic(t, func() { e.Backward(ag.Sum(z)) }); !strings.Contains(msg, "while its Backward is running") {
		t.Fatalf("recording during Backward: %q", msg)
	}
	f := ag.NewTape(eng64())
	g := ag.Custom("short", x.Clone(), func(gy *tensor.Tensor[float64]) ([]*tensor.Tensor[float64], error) { return nil, nil }, f.Input(x))
	msg = mustPanic(t, func() { f.Backward(ag.Sum(g)) })
	if !strings.Contains(msg, "Custom(short)") || !strings.Contains(msg, "0 gradients for 1 inputs") {
		t.Fatalf("wrong gradient count: %q", msg)
	}
	h := ag.NewTape(eng64())
	k := ag.Custom("wrong", x.Clone(), func(gy *tensor.Tensor[float64]) ([]*tensor.Tensor[float64], error) {
		return []*tensor.Tensor[float64]{tensor.New[float64](4)}, nil
	}, h.Input(x))
	msg = mustPanic(t, func() { h.Backward(ag.Sum(k)) })
	if !strings.Contains(msg, "Custom(wrong)") || !strings.Contains(msg, "[4]") || !strings.Contains(msg, "[2 2]") {
		t.Fatalf("wrong gradient shape: %q", msg)
	}
	func() {
		defer func() {
			if err, ok := recover().(error); !ok || !errors.As(err, &se) {
				t.Fatalf("wrong gradient shape panicked with %v, want *tensor.ShapeError", err)
			}
		}()
		h2 := ag.NewTape(eng64())
		h2.Backward(ag.Sum(ag.Custom("wrong", x.Clone(), func(gy *tensor.Tensor[float64]) ([]*tensor.Tensor[float64], error) {
			return []*tensor.Tensor[float64]{tensor.New[float64](4)}, nil
		}, h2.Input(x))))
	}()
}

func TestInputAndDetach(t *testing.T) {
	tp := ag.NewTape(eng64())
	x := tensor.FromSlice([]float64{1, -2, 3})
	v := tp.Input(x)
	// L = Σ x·detach(x) + Σ x²: dL/dx = x + 2x.
	loss := ag.Add(ag.Sum(ag.Mul(v, ag.Detach(v))), ag.Sum(ag.Square(v)))
	tp.Backward(loss)
	for i, g := range v.Grad().Data() {
		if want := 3 * x.Data()[i]; g != want {
			t.Fatalf("grad[%d] = %v, want %v", i, g, want)
		}
	}
}

// TestSteadyStateAllocs checks that a training step on a reused tape
// allocates nothing once its buffers exist.
func TestSteadyStateAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	m := newMLP[float32](rng, 8, 16, 4)
	x := tensor.RandN[float32](rng, 0, 1, 4, 8)
	target := tensor.RandN[float32](rng, 0, 1, 4, 4)
	labels := []int{0, 3, 2, 1}
	tp := ag.NewTape(eng32())
	step := func() {
		tp.Reset()
		y := m.forward(tp, ag.Flatten(ag.Reshape(tp.Const(x), 4, 2, -1)))
		l := ag.Add(ag.MSE(y, tp.Const(target)), ag.SoftmaxCrossEntropy(ag.ReLU(y), labels))
		tp.Backward(ag.MulScalar(l, tp.Scalar(0.5)))
	}
	step()
	if n := testing.AllocsPerRun(20, step); n != 0 {
		t.Fatalf("a training step on a reused tape allocates %v times", n)
	}
}

// TestReuseAcrossShapes runs passes of different batch sizes on one tape
// (and after Release) and compares them with fresh tapes.
func TestReuseAcrossShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	m := newMLP[float64](rng, 3, 5, 2)
	tp := ag.NewTape(eng64())
	for k, batch := range []int{4, 3, 4, 1, 4} {
		x := tensor.RandN[float64](rng, 0, 1, batch, 3)
		grads := func(tp *ag.Tape[float64]) ([]*tensor.Tensor[float64], float64) {
			ag.ZeroGrads(m.params())
			xv := tp.Input(x)
			h := m.forward(tp, xv)
			loss := ag.Mean(ag.Square(h))
			tp.Backward(loss)
			if h.Grad() != nil {
				t.Fatal("an op result kept its gradient after Backward")
			}
			gs := []*tensor.Tensor[float64]{xv.Grad().Clone()}
			for _, p := range m.params() {
				gs = append(gs, p.Grad.Clone())
			}
			return gs, loss.Item()
		}
		if k == 3 {
			tp.Release()
		}
		tp.Reset()
		got, lg := grads(tp)
		want, lw := grads(ag.NewTape(eng64()))
		if lg != lw {
			t.Fatalf("batch %d: loss %v on a reused tape, %v on a fresh one", batch, lg, lw)
		}
		for i := range got {
			if d, _ := maxAbsDiff(got[i], want[i]); d != 0 {
				t.Fatalf("batch %d: gradient %d differs by %v on a reused tape", batch, i, d)
			}
		}
	}
}
