package interp_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/interp"
	"github.com/adamnode/adamnode/tensor"
)

// valuer is what ValueAt and DerivativeAt add to every interpolant.
type valuer interface {
	ValueAt(t float64) *tensor.Tensor[float64]
	DerivativeAt(t float64) *tensor.Tensor[float64]
}

var (
	_ valuer = (*interp.Linear[float64])(nil)
	_ valuer = (*interp.NaturalCubic[float64])(nil)
	_ valuer = (*interp.HermiteBackward[float64])(nil)
)

// TestValuesAt: ValueAt and DerivativeAt give Evaluate's and Derivative's
// values (inside the pieces, at the knots, outside both ends) as fresh
// [B, C] tensors, recording nothing, with observations that need a
// gradient; the values can enter another tape as constants, and a
// gradient there does not reach the observations.
func TestValuesAt(t *testing.T) {
	ref := loadReference(t)
	for _, c := range constructors {
		tp := newTape()
		y := tp.Input(obsTensor(ref.Obs))
		x, err := c.make(ref.Times, y)
		if err != nil {
			t.Fatal(err)
		}
		v := x.(valuer)
		for _, tq := range ref.Queries {
			for _, k := range []struct {
				name string
				at   func(float64) *tensor.Tensor[float64]
				rec  func(*autograd.Tape[float64], float64) autograd.Var[float64]
			}{
				{"ValueAt", v.ValueAt, x.Evaluate},
				{"DerivativeAt", v.DerivativeAt, x.Derivative},
			} {
				got := k.at(tq)
				if s := got.Shape(); len(s) != 2 || s[0] != 2 || s[1] != 3 {
					t.Fatalf("%s.%s(%v): shape %v, want [2 3]", c.name, k.name, tq, s)
				}
				want := k.rec(tp, tq).Value().ReadData()
				for i, w := range want {
					if g := got.ReadData()[i]; math.Abs(g-w) > 1e-14*max(1, math.Abs(w)) {
						t.Errorf("%s.%s(%v)[%d] = %.17g, want %.17g", c.name, k.name, tq, i, g, w)
					}
				}
				// A fresh tensor each call: writing to one changes no other.
				got.Data()[0] = math.Inf(1)
				if again := k.at(tq).ReadData()[0]; again != want[0] {
					t.Errorf("%s.%s(%v) after writing to an earlier result: %v, want %v", c.name, k.name, tq, again, want[0])
				}
			}
		}
		// On another tape, as a constant.
		other := newTape()
		d := other.Const(v.DerivativeAt(0.7))
		w := other.Input(tensor.Full[float64](2, 2, 3))
		if err := other.Backward(autograd.Sum(autograd.Mul(w, d))); err != nil {
			t.Fatal(err)
		}
		if g := w.Grad().ReadData(); g[4] != v.DerivativeAt(0.7).ReadData()[4] {
			t.Errorf("%s: gradient through the constant derivative %v, want %v", c.name, g[4], v.DerivativeAt(0.7).ReadData()[4])
		}
		if y.Grad() != nil {
			t.Errorf("%s: the observations got a gradient from another tape", c.name)
		}
	}
}

// TestValuesAtFloat32: float32 observations give float32 results, within
// float32 rounding of float64's.
func TestValuesAtFloat32(t *testing.T) {
	ref := loadReference(t)
	obs64 := obsTensor(ref.Obs)
	obs32 := tensor.New[float32](obs64.Shape()...)
	for i, v := range obs64.ReadData() {
		obs32.Data()[i] = float32(v)
	}
	x32, err := interp.NewNaturalCubic(ref.Times, autograd.NewTape(tensor.EngineFor[float32](tensor.Default())).Const(obs32))
	if err != nil {
		t.Fatal(err)
	}
	x64, _ := interp.NewNaturalCubic(ref.Times, newTape().Const(obs64))
	for _, tq := range ref.Queries {
		d32, d64 := x32.DerivativeAt(tq).ReadData(), x64.DerivativeAt(tq).ReadData()
		for i := range d64 {
			if math.Abs(float64(d32[i])-d64[i]) > 1e-4*max(1, math.Abs(d64[i])) {
				t.Errorf("t = %v [%d]: float32 %v, float64 %v", tq, i, d32[i], d64[i])
			}
		}
	}
}

// TestValuesAtMisuse: t NaN panics naming the interpolant and the method;
// after the observations' tape is Reset, the coefficients are gone and
// the call panics instead of reading a later pass's buffers.
func TestValuesAtMisuse(t *testing.T) {
	ref := loadReference(t)
	tp := newTape()
	x, err := interp.NewNaturalCubic(ref.Times, tp.Const(obsTensor(ref.Obs)))
	if err != nil {
		t.Fatal(err)
	}
	expectPanic := func(name, want string, call func()) {
		t.Helper()
		defer func() {
			r := recover()
			if r == nil || !strings.Contains(fmt.Sprint(r), want) {
				t.Errorf("%s: panic %v, want one containing %q", name, r, want)
			}
		}()
		call()
	}
	expectPanic("NaN", "interp: NaturalCubic.DerivativeAt: t is NaN", func() { x.DerivativeAt(math.NaN()) })
	expectPanic("NaN", "interp: NaturalCubic.ValueAt: t is NaN", func() { x.ValueAt(math.NaN()) })
	tp.Reset()
	expectPanic("after Reset", "earlier pass", func() { x.DerivativeAt(0.5) })
}
