package autograd_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// convTimeCases are the geometries Conv2DTime is checked on: the paper's
// 3×3 pad-1 and 1×1 layers, strides, padding wider than the kernel's
// reach, rectangular kernels and images.
var convTimeCases = []struct {
	name           string
	b, c, co, h, w int
	kh, kw         int
	p              tensor.ConvParams
}{
	{"3x3 pad1", 2, 3, 4, 5, 6, 3, 3, tensor.ConvParams{Pad: 1}},
	{"1x1", 2, 2, 3, 4, 4, 1, 1, tensor.ConvParams{}},
	{"3x3 stride2 pad1", 2, 2, 3, 7, 5, 3, 3, tensor.ConvParams{Stride: 2, Pad: 1}},
	{"2x3 pad2", 1, 2, 2, 4, 5, 2, 3, tensor.ConvParams{Pad: 2}},
	{"3x3 no pad", 3, 1, 2, 5, 5, 3, 3, tensor.ConvParams{}},
	{"5x5 pad2 one channel", 2, 1, 1, 6, 6, 5, 5, tensor.ConvParams{Pad: 2}},
	{"3x3 pad1 8 channels", 2, 8, 8, 5, 4, 3, 3, tensor.ConvParams{Pad: 1}},
	{"3x3 pad1 32 channels", 1, 32, 32, 3, 3, 3, 3, tensor.ConvParams{Pad: 1}}, // the CPU engines' Winograd path, float64 too
}

// TestConv2DTimeMatchesConcat: Conv2DTime equals Conv2D of ConcatTime, in
// value and in every gradient, in float64 and float32, with the bias and
// without, at a zero and a nonzero time.
func TestConv2DTimeMatchesConcat(t *testing.T) {
	for _, c := range convTimeCases {
		for _, tv := range []float64{0, 0.37} {
			for _, withBias := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/t=%g/bias=%v", c.name, tv, withBias), func(t *testing.T) {
					testConvTimeMatch[float64](t, c.b, c.c, c.co, c.h, c.w, c.kh, c.kw, c.p, tv, withBias, 1e-12)
					testConvTimeMatch[float32](t, c.b, c.c, c.co, c.h, c.w, c.kh, c.kw, c.p, tv, withBias, 2e-5)
				})
			}
		}
	}
}

func testConvTimeMatch[T tensor.Float](t *testing.T, b, c, co, h, w, kh, kw int, p tensor.ConvParams, tv float64, withBias bool, tol float64) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := ag.NewParam("x", tensor.RandN[T](rng, 0, 1, b, c, h, w))
	wt := ag.NewParam("w", tensor.RandN[T](rng, 0, 1, co, c+1, kh, kw))
	bias := ag.NewParam("b", tensor.RandN[T](rng, 0, 1, co))
	params := []*ag.Param[T]{x, wt, bias}
	run := func(fused bool) (*tensor.Tensor[T], []*tensor.Tensor[T]) {
		ag.ZeroGrads(params)
		tp := ag.NewTape(tensor.EngineFor[T](tensor.Gonum(2)))
		var bv ag.Var[T]
		if withBias {
			bv = tp.Param(bias)
		}
		conv := func(tv float64) ag.Var[T] {
			if fused {
				return ag.Conv2DTime(tp.Param(x), T(tv), tp.Param(wt), bv, p)
			}
			return ag.Conv2D(ag.ConcatTime(tp.Param(x), T(tv)), tp.Param(wt), bv, p)
		}
		y := conv(tv)
		// A nonuniform cotangent, L = Σ y ⊙ r, plus a second use of the
		// same parameters at another time, so that gradients accumulate.
		r := tensor.RandN[T](rand.New(rand.NewPCG(7, 8)), 0, 1, y.Value().Shape()...)
		loss := ag.Add(ag.Sum(ag.Mul(y, tp.Const(r))), ag.Sum(ag.Square(conv(tv-0.5))))
		if err := tp.Backward(loss); err != nil {
			t.Fatal(err)
		}
		var grads []*tensor.Tensor[T]
		for _, q := range params {
			grads = append(grads, q.Grad.Clone())
		}
		return y.Value().Clone(), grads
	}
	want, wantG := run(false)
	got, gotG := run(true)
	near := func(what string, a, b *tensor.Tensor[T]) {
		t.Helper()
		if !a.SameShape(b) {
			t.Fatalf("%s: shape %v, want %v", what, a.Shape(), b.Shape())
		}
		scale := 1.0 // errors relative to the largest element: sums cancel
		for _, u := range b.Data() {
			scale = max(scale, math.Abs(float64(u)))
		}
		for i, v := range a.Data() {
			u := b.Data()[i]
			if math.Abs(float64(v-u)) > tol*scale {
				t.Fatalf("%s (%T): element %d is %v, want %v", what, v, i, v, u)
			}
		}
	}
	near("value", got, want)
	for i, name := range []string{"∂x", "∂w", "∂b"} {
		if i == 2 && !withBias {
			continue
		}
		near(name, gotG[i], wantG[i])
	}
}

// TestConv2DTimeGradients checks Conv2DTime against central differences.
func TestConv2DTimeGradients(t *testing.T) {
	for _, c := range convTimeCases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(9, 10))
			x := ag.NewParam("x", tensor.RandN[float64](rng, 0, 1, c.b, c.c, c.h, c.w))
			w := ag.NewParam("w", tensor.RandN[float64](rng, 0, 1, c.co, c.c+1, c.kh, c.kw))
			b := ag.NewParam("b", tensor.RandN[float64](rng, 0, 1, c.co))
			f := func(tp *ag.Tape[float64]) ag.Var[float64] {
				return ag.Conv2DTime(tp.Param(x), 0.6, tp.Param(w), tp.Param(b), c.p)
			}
			// Outputs reach ~10: the differences carry ~1e-9 of rounding;
			// with 32 channels (sums of ~300 products, outputs to ~50)
			// ~1e-7, as with im2col's path at 30 channels.
			opt := ag.GradCheckOptions{RelTol: 1e-5}
			if c.c >= 32 {
				opt.AbsTol = 1e-6
			}
			if rep, err := ag.CheckGradients(f, []*ag.Param[float64]{x, w, b}, opt); err != nil {
				t.Fatalf("%v\n%v", err, rep)
			}
		})
	}
}

// TestConv2DTimeShapes: a filter without the extra time channel is a
// shape error naming both shapes.
func TestConv2DTimeShapes(t *testing.T) {
	tp := ag.NewTape(tensor.EngineFor[float64](tensor.Gonum(1)))
	x := tp.Const(tensor.New[float64](1, 3, 4, 4))
	w := tp.Const(tensor.New[float64](2, 3, 3, 3))
	err := func() (err error) {
		defer tensor.Recover(&err)
		ag.Conv2DTime(x, 0.5, w, ag.Var[float64]{}, tensor.ConvParams{Pad: 1})
		return nil
	}()
	if err == nil || !strings.Contains(err.Error(), "[1 3 4 4]") || !strings.Contains(err.Error(), "[2 3 3 3]") {
		t.Errorf("got %v, want a shape error naming both shapes", err)
	}
}

// TestConv2DTimeReadsFilter checks that a forward pass of Conv2DTime only
// reads its filter: the filter's storage version (what infer's parameter
// check watches) does not move, at t = 0 and at t ≠ 0 (where the time
// channel's taps are read for the bias).
func TestConv2DTimeReadsFilter(t *testing.T) {
	for _, tv := range []float32{0, 0.37} {
		rng := rand.New(rand.NewPCG(5, 6))
		x := tensor.RandN[float32](rng, 0, 1, 2, 3, 6, 6)
		w := tensor.RandN[float32](rng, 0, 1, 4, 4, 3, 3)
		before := w.Version()
		tp := ag.NewTape(tensor.EngineFor[float32](tensor.Gonum(1)))
		tp.SetNoGrad(true)
		ag.Conv2DTime(tp.Const(x), tv, tp.Const(w), ag.Var[float32]{}, tensor.ConvParams{Stride: 1, Pad: 1})
		if after := w.Version(); after != before {
			t.Errorf("t=%g: the filter's version moved from %d to %d in a forward pass", tv, before, after)
		}
	}
}
