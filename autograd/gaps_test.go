package autograd_test

// Tests written for mutants that an audit found alive (bench/mutation.md):
// each fails on the mutation named in its doc.

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// TestAdaptiveAvgPoolUnevenWindows: where the input size is not a multiple
// of the output's, output (i, j) averages rows ⌊i·H/oh⌋ … ⌈(i+1)·H/oh⌉−1
// (windows that overlap, as PyTorch's), and its gradient spreads each
// window's g over the window. (Mutants: i*in/out → i/in*out, and the
// ceiling's +out−1 dropped.)
func TestAdaptiveAvgPoolUnevenWindows(t *testing.T) {
	const h, w, oh, ow = 5, 7, 3, 2
	x := tensor.New[float64](1, 1, h, w)
	for i := range x.Data() {
		x.Data()[i] = float64(i*i%11) - 3
	}
	span := func(i, in, out int) (int, int) { return i * in / out, ((i+1)*in + out - 1) / out }
	want := make([]float64, oh*ow)
	wantGrad := make([]float64, h*w)
	for i := range oh {
		for j := range ow {
			ylo, yhi := span(i, h, oh)
			xlo, xhi := span(j, w, ow)
			n := float64((yhi - ylo) * (xhi - xlo))
			var s float64
			for y := ylo; y < yhi; y++ {
				for c := xlo; c < xhi; c++ {
					s += x.Data()[y*w+c]
					wantGrad[y*w+c] += 1 / n
				}
			}
			want[i*ow+j] = s / n
		}
	}
	// The windows by hand: rows [0,2) [1,4) [3,5), columns [0,4) [3,7).
	if r0, r1 := span(1, h, oh); r0 != 1 || r1 != 4 {
		t.Fatalf("reference window rows [%d, %d), want [1, 4)", r0, r1)
	}
	tp := ag.NewTape(eng64())
	in := tp.Input(x)
	y := ag.AdaptiveAvgPool2D(in, oh, ow)
	if d := cmp.Diff(want, y.Value().Data(), cmpopts.EquateApprox(0, 1e-12)); d != "" {
		t.Errorf("values (-want +got):\n%s", d)
	}
	if err := tp.Backward(ag.Sum(y)); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(wantGrad, in.Grad().Data(), cmpopts.EquateApprox(0, 1e-12)); d != "" {
		t.Errorf("gradient (-want +got):\n%s", d)
	}
}

// TestClampBounds: Clamp with lo = hi is allowed (every value becomes lo),
// and its gradient passes at x = lo and x = hi, bounds included, as
// PyTorch's clamp. (Mutants: lo > hi → lo >= hi in the check; x >= lo →
// x > lo in the gradient.)
func TestClampBounds(t *testing.T) {
	x := tensor.FromSlice([]float64{-1, 0.5, 1, 2, 3}, 5)
	for _, c := range []struct {
		lo, hi   float64
		want     []float64
		wantGrad []float64
	}{
		{1, 1, []float64{1, 1, 1, 1, 1}, []float64{0, 0, 1, 0, 0}},
		{0.5, 2, []float64{0.5, 0.5, 1, 2, 2}, []float64{0, 1, 1, 1, 0}},
	} {
		tp := ag.NewTape(eng64())
		in := tp.Input(x)
		y := ag.Clamp(in, c.lo, c.hi)
		if err := tp.Backward(ag.Sum(y)); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(c.want, y.Value().Data()); d != "" {
			t.Errorf("Clamp(x, %g, %g) (-want +got):\n%s", c.lo, c.hi, d)
		}
		if d := cmp.Diff(c.wantGrad, in.Grad().Data()); d != "" {
			t.Errorf("Clamp(x, %g, %g)'s gradient (-want +got):\n%s", c.lo, c.hi, d)
		}
	}
}

// TestShapeEdges: Flatten of a rank-1 value is [B, 1]; an axis equal to
// the rank is a shape error; VJP destinations missing or misshapen for a
// listed parameter panic, naming it. (Mutants: Rank() < 1 → <= 1;
// axis >= r → axis > r; p == nil || g == nil || … → &&.)
func TestShapeEdges(t *testing.T) {
	tp := ag.NewTape(eng64())
	v := ag.Flatten(tp.Const(tensor.FromSlice([]float64{1, 2, 3}, 3)))
	if d := cmp.Diff([]int{3, 1}, v.Shape()); d != "" {
		t.Errorf("Flatten of [3] (-want +got):\n%s", d)
	}
	m := tp.Const(tensor.New[float64](2, 3))
	for _, axis := range []int{2, -3} {
		if msg := mustPanic(t, func() { ag.SumAxis(m, axis, false) }); !strings.Contains(msg, "out of range for shape [2 3]") {
			t.Errorf("SumAxis of [2 3] along %d: %q", axis, msg)
		}
		if msg := mustPanic(t, func() { ag.Narrow(m, axis, 0, 1) }); !strings.Contains(msg, "out of range for shape [2 3]") {
			t.Errorf("Narrow of [2 3] along %d: %q", axis, msg)
		}
		if msg := mustPanic(t, func() { ag.Concat(axis, m, m) }); !strings.Contains(msg, "out of range for shape [2 3]") {
			t.Errorf("Concat of [2 3] along %d: %q", axis, msg)
		}
	}
	w := ag.NewParam("w", tensor.FromSlice([]float64{1, 2}, 2))
	f := func(tp *ag.Tape[float64], in []ag.Var[float64]) ag.Var[float64] { return ag.Mul(in[0], tp.Param(w)) }
	at := []*tensor.Tensor[float64]{tensor.FromSlice([]float64{3, 4}, 2)}
	pb := ag.NewPullback(eng64())
	for name, g := range map[string]*tensor.Tensor[float64]{"missing": nil, "misshapen": tensor.New[float64](3)} {
		dst := ag.VJPDest[float64]{Params: []*ag.Param[float64]{w}, ParamGrads: []*tensor.Tensor[float64]{g}}
		if msg := mustPanic(t, func() { pb.MustVJP(f, at, tensor.Full[float64](1, 2), dst) }); !strings.Contains(msg, `"w"`) {
			t.Errorf("a %s parameter destination: %q", name, msg)
		}
	}
	// A listed, well-shaped destination works.
	g := tensor.New[float64](2)
	pb.MustVJP(f, at, tensor.Full[float64](1, 2), ag.VJPDest[float64]{Params: []*ag.Param[float64]{w}, ParamGrads: []*tensor.Tensor[float64]{g}})
	if d := cmp.Diff([]float64{3, 4}, g.Data()); d != "" || math.IsNaN(g.Data()[0]) {
		t.Errorf("parameter cotangent (-want +got):\n%s", d)
	}
}
