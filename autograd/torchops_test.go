package autograd_test

// Value tests of the ops a PyTorch user reaches for (issue 32): each
// against numbers worked by hand, with the gradient of a weighted sum.

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// checkOp records f on inputs (each a fresh tape's Input), compares its
// value with want (shape and data) and, after Backward of Σ w ⊙ f (w ones
// when nil), the inputs' gradients with wantGrads.
func checkOp(t *testing.T, name string, ins []*tensor.Tensor[float64], f func(tp *ag.Tape[float64], x []V) V, wantShape []int, want []float64, w []float64, wantGrads ...[]float64) {
	t.Helper()
	tp := ag.NewTape(eng64())
	xs := make([]V, len(ins))
	for i, x := range ins {
		xs[i] = tp.Input(x)
	}
	y := f(tp, xs)
	opt := cmpopts.EquateApprox(0, 1e-12)
	if d := cmp.Diff(wantShape, y.Shape()); d != "" {
		t.Errorf("%s: shape (-want +got):\n%s", name, d)
	}
	if d := cmp.Diff(want, y.Value().Data(), opt); d != "" {
		t.Errorf("%s: values (-want +got):\n%s", name, d)
	}
	loss := ag.Sum(y)
	if w != nil {
		loss = ag.Sum(ag.Mul(y, tp.Const(tensor.FromSlice(w, y.Shape()...))))
	}
	if err := tp.Backward(loss); err != nil {
		t.Fatal(err)
	}
	for i, wg := range wantGrads {
		if d := cmp.Diff(wg, xs[i].Grad().Data(), opt); d != "" {
			t.Errorf("%s: gradient of input %d (-want +got):\n%s", name, i, d)
		}
	}
}

func seq(n int, shape ...int) *tensor.Tensor[float64] {
	d := make([]float64, n)
	for i := range d {
		d[i] = float64(i)
	}
	return tensor.FromSlice(d, shape...)
}

func TestPermuteStackValues(t *testing.T) {
	// z[k, i, 0] = x[i, 0, k]; the gradient of Σ w⊙z is w permuted back.
	checkOp(t, "Permute", []*tensor.Tensor[float64]{seq(6, 2, 1, 3)},
		func(_ *ag.Tape[float64], x []V) V { return ag.Permute(x[0], 2, 0, 1) },
		[]int{3, 2, 1}, []float64{0, 3, 1, 4, 2, 5}, []float64{0, 1, 2, 3, 4, 5}, []float64{0, 2, 4, 1, 3, 5})
	checkOp(t, "Permute/negative", []*tensor.Tensor[float64]{seq(6, 2, 3)},
		func(_ *ag.Tape[float64], x []V) V { return ag.Permute(x[0], -1, 0) },
		[]int{3, 2}, []float64{0, 3, 1, 4, 2, 5}, nil, []float64{1, 1, 1, 1, 1, 1})
	a, b := tensor.FromSlice([]float64{1, 2}, 2), tensor.FromSlice([]float64{3, 4}, 2)
	checkOp(t, "Stack/0", []*tensor.Tensor[float64]{a, b},
		func(_ *ag.Tape[float64], x []V) V { return ag.Stack(0, x[0], x[1]) },
		[]int{2, 2}, []float64{1, 2, 3, 4}, []float64{1, 2, 3, 4}, []float64{1, 2}, []float64{3, 4})
	checkOp(t, "Stack/1", []*tensor.Tensor[float64]{a, b},
		func(_ *ag.Tape[float64], x []V) V { return ag.Stack(-1, x[0], x[1], x[0]) },
		[]int{2, 3}, []float64{1, 3, 1, 2, 4, 2}, []float64{1, 2, 3, 4, 5, 6}, []float64{4, 10}, []float64{2, 5})
}

func TestSoftmaxFamilyValues(t *testing.T) {
	x := func() *tensor.Tensor[float64] { return tensor.FromSlice([]float64{0, math.Log(3), 1000, 1000}, 2, 2) }
	ins := []*tensor.Tensor[float64]{x()}
	// Row 0: log(1 + 3); row 1 (shifted by its maximum, else e¹⁰⁰⁰ = ∞):
	// 1000 + log 2. The gradient of a sum is the softmax.
	checkOp(t, "LogSumExp", ins, func(_ *ag.Tape[float64], x []V) V { return ag.LogSumExp(x[0], 1, false) },
		[]int{2}, []float64{math.Log(4), 1000 + math.Log(2)}, nil, []float64{0.25, 0.75, 0.5, 0.5})
	checkOp(t, "LogSumExp/keep", ins, func(_ *ag.Tape[float64], x []V) V { return ag.LogSumExp(x[0], -1, true) },
		[]int{2, 1}, []float64{math.Log(4), 1000 + math.Log(2)}, []float64{2, 0}, []float64{0.5, 1.5, 0, 0})
	// Down axis 0: columns (0, 1000) and (log 3, 1000).
	checkOp(t, "LogSumExp/axis0", ins, func(_ *ag.Tape[float64], x []V) V { return ag.LogSumExp(x[0], 0, false) },
		[]int{2}, []float64{1000, 1000}, nil, []float64{0, 0, 1, 1})
	// Softmax with the weight [1 0; 0 0]: dx = y ⊙ (w − Σ w y).
	checkOp(t, "Softmax", ins, func(_ *ag.Tape[float64], x []V) V { return ag.Softmax(x[0], 1) },
		[]int{2, 2}, []float64{0.25, 0.75, 0.5, 0.5}, []float64{1, 0, 0, 0}, []float64{0.1875, -0.1875, 0, 0})
	// LogSoftmax with the same weight: dx = w − softmax · Σ w.
	checkOp(t, "LogSoftmax", ins, func(_ *ag.Tape[float64], x []V) V { return ag.LogSoftmax(x[0], -1) },
		[]int{2, 2}, []float64{math.Log(0.25), math.Log(0.75), -math.Log(2), -math.Log(2)}, []float64{1, 0, 0, 0}, []float64{0.75, -0.75, 0, 0})
	// All −∞ along the axis: LogSumExp −∞, as PyTorch's.
	tp := ag.NewTape(eng64())
	inf := tp.Const(tensor.FromSlice([]float64{math.Inf(-1), math.Inf(-1)}, 1, 2))
	if got := ag.LogSumExp(inf, 1, false).Value().Data()[0]; !math.IsInf(got, -1) {
		t.Errorf("LogSumExp of −∞s = %v, want −∞", got)
	}
}

func TestIndexOpsValues(t *testing.T) {
	x := tensor.FromSlice([]float64{1, 2, 3, 4, 5, 6}, 3, 2)
	checkOp(t, "IndexSelect/0", []*tensor.Tensor[float64]{x},
		func(_ *ag.Tape[float64], x []V) V { return ag.IndexSelect(x[0], 0, []int{2, 0, 2}) },
		[]int{3, 2}, []float64{5, 6, 1, 2, 5, 6}, nil, []float64{1, 1, 0, 0, 2, 2})
	checkOp(t, "IndexSelect/1", []*tensor.Tensor[float64]{x},
		func(_ *ag.Tape[float64], x []V) V { return ag.IndexSelect(x[0], -1, []int{1}) },
		[]int{3, 1}, []float64{2, 4, 6}, []float64{1, 2, 3}, []float64{0, 1, 0, 2, 0, 3})
	x23 := tensor.FromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	// torch.gather(x, 1, [[2, 2], [0, 1]]) = [[3, 3], [4, 5]].
	checkOp(t, "Gather/1", []*tensor.Tensor[float64]{x23},
		func(_ *ag.Tape[float64], x []V) V { return ag.Gather(x[0], 1, []int{2, 2, 0, 1}, []int{2, 2}) },
		[]int{2, 2}, []float64{3, 3, 4, 5}, nil, []float64{0, 0, 2, 1, 1, 0})
	// torch.gather(x, 0, [[1, 0, 1]]) = [[4, 2, 6]].
	checkOp(t, "Gather/0", []*tensor.Tensor[float64]{x23},
		func(_ *ag.Tape[float64], x []V) V { return ag.Gather(x[0], 0, []int{1, 0, 1}, []int{1, 3}) },
		[]int{1, 3}, []float64{4, 2, 6}, []float64{1, 2, 3}, []float64{0, 2, 0, 1, 0, 3})
}

func TestWhereMaskedValues(t *testing.T) {
	mask := tensor.FromSlice([]float64{1, 0, 1}, 3)
	// An ∞ not taken reaches neither the value nor a gradient.
	checkOp(t, "Where", []*tensor.Tensor[float64]{tensor.FromSlice([]float64{1, math.Inf(1), 3}, 3), tensor.FromSlice([]float64{10, 20, 30}, 3)},
		func(_ *ag.Tape[float64], x []V) V { return ag.Where(mask, x[0], x[1]) },
		[]int{3}, []float64{1, 20, 3}, []float64{1, 2, 3}, []float64{1, 0, 3}, []float64{0, 2, 0})
	// A scalar y, broadcast; its gradient sums where the mask is 0.
	checkOp(t, "Where/scalar", []*tensor.Tensor[float64]{tensor.FromSlice([]float64{1, 2, 3}, 3), tensor.FromSlice([]float64{7}, 1)},
		func(_ *ag.Tape[float64], x []V) V {
			return ag.Where(tensor.FromSlice([]float64{0, 1, 0}, 3), x[0], x[1])
		},
		[]int{3}, []float64{7, 2, 7}, []float64{1, 2, 3}, []float64{0, 2, 0}, []float64{4})
	x := tensor.FromSlice([]float64{1, 2, 3, 4, math.NaN(), 6}, 2, 3)
	m := tensor.FromSlice([]float64{1, 0, 1, 0, 0, 0}, 2, 3)
	checkOp(t, "MaskedSum", []*tensor.Tensor[float64]{x},
		func(_ *ag.Tape[float64], x []V) V { return ag.MaskedSum(x[0], m, 1, false) },
		[]int{2}, []float64{4, 0}, []float64{1, 2}, []float64{1, 0, 1, 0, 0, 0})
	// Row 1 has no element: mean 0, gradient 0.
	checkOp(t, "MaskedMean", []*tensor.Tensor[float64]{x},
		func(_ *ag.Tape[float64], x []V) V { return ag.MaskedMean(x[0], m, 1, true) },
		[]int{2, 1}, []float64{2, 0}, nil, []float64{0.5, 0, 0.5, 0, 0, 0})
	checkOp(t, "MaskedMean/0", []*tensor.Tensor[float64]{x},
		func(_ *ag.Tape[float64], x []V) V { return ag.MaskedMean(x[0], m, 0, false) },
		[]int{3}, []float64{1, 0, 3}, nil, []float64{1, 0, 1, 0, 0, 0})
}

func TestCumsumScalarFirstValues(t *testing.T) {
	x := tensor.FromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	checkOp(t, "Cumsum/1", []*tensor.Tensor[float64]{x},
		func(_ *ag.Tape[float64], x []V) V { return ag.Cumsum(x[0], 1) },
		[]int{2, 3}, []float64{1, 3, 6, 4, 9, 15}, nil, []float64{3, 2, 1, 3, 2, 1})
	checkOp(t, "Cumsum/0", []*tensor.Tensor[float64]{x},
		func(_ *ag.Tape[float64], x []V) V { return ag.Cumsum(x[0], 0) },
		[]int{2, 3}, []float64{1, 2, 3, 5, 7, 9}, []float64{1, 2, 3, 4, 5, 6}, []float64{5, 7, 9, 4, 5, 6})
	checkOp(t, "RSub", []*tensor.Tensor[float64]{tensor.FromSlice([]float64{0.25, 2}, 2)},
		func(_ *ag.Tape[float64], x []V) V { return ag.RSub(1, x[0]) },
		[]int{2}, []float64{0.75, -1}, nil, []float64{-1, -1})
	checkOp(t, "RDiv", []*tensor.Tensor[float64]{tensor.FromSlice([]float64{0.5, 4}, 2)},
		func(_ *ag.Tape[float64], x []V) V { return ag.RDiv(2, x[0]) },
		[]int{2}, []float64{4, 0.5}, nil, []float64{-8, -0.125})
}

func TestLinearLeadingDims(t *testing.T) {
	x := tensor.FromSlice([]float64{1, 2, 3, 4}, 2, 1, 2)
	w := tensor.FromSlice([]float64{2, 1}, 1, 2)
	b := tensor.FromSlice([]float64{0.5}, 1)
	ins := []*tensor.Tensor[float64]{x, w, b}
	// z = x·wᵀ + b per row: 4.5, 10.5; ∂Σz/∂x = w per row, ∂/∂w = Σ rows.
	checkOp(t, "Linear/3d", ins, func(_ *ag.Tape[float64], x []V) V { return ag.Linear(x[0], x[1], x[2]) },
		[]int{2, 1, 1}, []float64{4.5, 10.5}, nil, []float64{2, 1, 2, 1}, []float64{4, 6}, []float64{2})
	checkOp(t, "LinearAct/3d", ins, func(_ *ag.Tape[float64], x []V) V { return ag.LinearAct(x[0], x[1], x[2], ag.ReLUAct) },
		[]int{2, 1, 1}, []float64{4.5, 10.5}, nil, []float64{2, 1, 2, 1}, []float64{4, 6}, []float64{2})
	checkOp(t, "Linear/1d", []*tensor.Tensor[float64]{tensor.FromSlice([]float64{1, 2}, 2), w},
		func(_ *ag.Tape[float64], x []V) V { return ag.Linear(x[0], x[1], V{}) },
		[]int{1}, []float64{4}, nil, []float64{2, 1}, []float64{1, 2})
}

// mustShapeError runs f, failing unless it panics with a *tensor.ShapeError
// whose message holds each of parts.
func mustShapeError(t *testing.T, f func(), parts ...string) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		err, _ := r.(error)
		var se *tensor.ShapeError
		if !errors.As(err, &se) {
			t.Fatalf("panicked with %T %v, want a *tensor.ShapeError", r, r)
		}
		for _, p := range parts {
			if !strings.Contains(se.Error(), p) {
				t.Errorf("message %q does not hold %q", se.Error(), p)
			}
		}
	}()
	f()
}

func TestTorchOpsShapeErrors(t *testing.T) {
	tp := ag.NewTape(eng64())
	x := tp.Input(seq(6, 2, 3))
	y := tp.Input(seq(6, 3, 2))
	mustShapeError(t, func() { ag.Permute(x, 0, 0) }, "[0 0]", "[2 3]")
	mustShapeError(t, func() { ag.Permute(x, 0) }, "[2 3]")
	mustShapeError(t, func() { ag.Stack(0, x, y) }, "[2 3]", "[3 2]")
	mustShapeError(t, func() { ag.Stack(3, x) }, "[2 3]")
	mustShapeError(t, func() { ag.LogSumExp(x, 2, false) }, "[2 3]")
	mustShapeError(t, func() { ag.Softmax(x, -3) }, "[2 3]")
	mustShapeError(t, func() { ag.IndexSelect(x, 1, []int{3}) }, "index 3", "[2 3]")
	mustShapeError(t, func() { ag.Gather(x, 1, []int{0, 0, 0}, []int{3, 1}) }, "[3 1]", "[2 3]")
	mustShapeError(t, func() { ag.Gather(x, 1, []int{0, 5}, []int{1, 2}) }, "index 5", "[2 3]")
	mustShapeError(t, func() { ag.Where(seq(6, 3, 2), x, x) }, "[3 2]", "[2 3]")
	mustShapeError(t, func() { ag.Where(seq(6, 2, 3), x, y) }, "[2 3]", "[3 2]")
	mustShapeError(t, func() { ag.Where(seq(6, 2, 3), x, tp.Input(seq(2, 2))) }, "[2 3]", "[2]")
	mustShapeError(t, func() { ag.MaskedMean(x, seq(6, 3, 2), 0, false) }, "[3 2]", "[2 3]")
	mustShapeError(t, func() { ag.Cumsum(x, 2) }, "[2 3]")
	mustShapeError(t, func() { ag.Linear(tp.Input(seq(12, 2, 2, 3)), y, V{}) }, "[2 2 3]", "[3 2]")
	mustShapeError(t, func() { ag.LinearAct(tp.Input(seq(3, 3)), y, V{}, ag.TanhAct) }, "[3]", "[3 2]")
}

// TestTorchOpsSteadyStateAllocs: a pass through the new ops on a reused
// tape allocates nothing once its buffers exist.
func TestTorchOpsSteadyStateAllocs(t *testing.T) {
	x := tensor.New[float32](2, 3, 4)
	for i := range x.Data() {
		x.Data()[i] = float32(i%7) / 7
	}
	w := ag.NewParam("w", tensor.New[float32](5, 4))
	mask := tensor.New[float32](2, 3, 4)
	for i := range mask.Data() {
		mask.Data()[i] = float32(i % 2)
	}
	idx := []int{2, 0, 2}
	gidx := make([]int, 2*3*4)
	for i := range gidx {
		gidx[i] = i % 3
	}
	gshape := []int{2, 3, 4}
	tp := ag.NewTape(eng32())
	step := func() {
		tp.Reset()
		xv := ag.Linear(tp.Const(x), tp.Param(w), ag.Var[float32]{})   // [2, 3, 5]
		p := ag.Permute(ag.Softmax(xv, -1), 2, 0, 1)                   // [5, 2, 3]
		s := ag.Stack(0, ag.LogSoftmax(p, 0), ag.Cumsum(p, 1))         // [2, 5, 2, 3]
		l := ag.Sum(ag.IndexSelect(ag.LogSumExp(s, 1, false), 2, idx)) // [2, 2, 3]
		xw := ag.Linear(tp.Const(x), tp.Param(w), ag.Var[float32]{})   // [2, 3, 5]
		g := ag.Gather(ag.Narrow(xw, 2, 0, 4), 1, gidx, gshape)        // [2, 3, 4]
		m := ag.MaskedMean(ag.Where(mask, g, ag.RDiv(1, ag.RSub(3, g))), mask, 1, false)
		tp.Backward(ag.Add(l, ag.Sum(m)))
	}
	step()
	if n := testing.AllocsPerRun(20, step); n != 0 {
		t.Errorf("a pass through the new ops on a reused tape allocates %v times", n)
	}
}

// TestSoftmaxLargeSplit: on a tensor large enough to be split across the
// engine's workers, the softmax family's values and gradients are those of
// each row computed alone.
func TestSoftmaxLargeSplit(t *testing.T) {
	const rows, cols = 40, 1700 // 68000 elements: split
	x := tensor.New[float64](rows, cols)
	w := tensor.New[float64](rows, cols)
	for i := range x.Data() {
		x.Data()[i] = math.Sin(float64(i)) * 5
		w.Data()[i] = math.Cos(float64(3 * i))
	}
	for _, c := range []struct {
		name string
		f    func(V) V
	}{
		{"Softmax", func(v V) V { return ag.Softmax(v, 1) }},
		{"LogSoftmax", func(v V) V { return ag.LogSoftmax(v, 1) }},
		{"LogSumExp", func(v V) V { return ag.LogSumExp(v, 1, true) }},
	} {
		tp := ag.NewTape(eng64())
		xv := tp.Input(x)
		y := c.f(xv)
		ww := tp.Const(w)
		if y.Shape()[1] == 1 {
			ww = ag.Narrow(ww, 1, 0, 1)
		}
		if err := tp.Backward(ag.Sum(ag.Mul(y, ww))); err != nil {
			t.Fatal(err)
		}
		tr := ag.NewTape(eng64())
		xr := tr.Input(x)
		var loss V
		var vals []float64
		for r := range rows {
			yr := c.f(ag.Narrow(xr, 0, r, 1))
			wr := ag.Narrow(tr.Const(w), 0, r, 1)
			if yr.Shape()[1] == 1 {
				wr = ag.Narrow(wr, 1, 0, 1)
			}
			vals = append(vals, yr.Value().Data()...)
			l := ag.Sum(ag.Mul(yr, wr))
			if r == 0 {
				loss = l
			} else {
				loss = ag.Add(loss, l)
			}
		}
		if err := tr.Backward(loss); err != nil {
			t.Fatal(err)
		}
		opt := cmpopts.EquateApprox(0, 1e-12)
		if d := cmp.Diff(vals, y.Value().Data(), opt); d != "" {
			t.Errorf("%s: values (-rows +whole):\n%s", c.name, d)
		}
		if d := cmp.Diff(xr.Grad().Data(), xv.Grad().Data(), opt); d != "" {
			t.Errorf("%s: gradients (-rows +whole):\n%s", c.name, d)
		}
	}
}

// TestSoftmaxFloat32Stable: logits of ±10⁴ in float32 (e^10000 overflows
// any float) give finite values and gradients, the shift by the maximum at
// work.
func TestSoftmaxFloat32Stable(t *testing.T) {
	x := tensor.FromSlice([]float32{1e4, 1e4 - 1, -1e4, 0}, 2, 2)
	tp := ag.NewTape(eng32())
	xv := tp.Input(x)
	p := ag.Softmax(xv, 1)
	lp := ag.LogSoftmax(xv, 1)
	lse := ag.LogSumExp(xv, 1, false)
	if err := tp.Backward(ag.Add(ag.Add(ag.Sum(ag.Mul(p, lp)), ag.Sum(lse)), ag.Sum(lp))); err != nil {
		t.Fatal(err)
	}
	e := float32(1 / (1 + math.Exp(-1)))
	want := []float32{e, 1 - e, 0, 1}
	if d := cmp.Diff(want, p.Value().Data(), cmpopts.EquateApprox(1e-6, 0)); d != "" {
		t.Errorf("softmax (-want +got):\n%s", d)
	}
	if got := lse.Value().Data(); math.Abs(float64(got[0])-(1e4+math.Log1p(math.Exp(-1)))) > 1e-2 || got[1] != 0 {
		t.Errorf("logsumexp %v", got)
	}
	for i, v := range append(append(lp.Value().Data(), xv.Grad().Data()...), lse.Value().Data()...) {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("non-finite value %v at %d", v, i)
		}
	}
}
