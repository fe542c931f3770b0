package interp_test

import (
	"math"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/interp"
	"github.com/adamnode/adamnode/tensor"
)

var (
	_ interp.Interpolant[float64] = (*interp.Linear[float64])(nil)
	_ interp.Interpolant[float32] = (*interp.NaturalCubic[float32])(nil)
	_ interp.Interpolant[float64] = (*interp.HermiteBackward[float64])(nil)
)

func newTape() *autograd.Tape[float64] {
	return autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
}

// TestLongNatural: a natural spline on 60 irregular knots (spacings from
// 0.01 to 1) against SciPy, at every knot, every midpoint and outside.
func TestLongNatural(t *testing.T) {
	ref := loadReference(t).Long
	tp := newTape()
	x, err := interp.NewNaturalCubic(ref.Times, tp.Const(obsTensor(ref.Obs)))
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for q, tq := range ref.Queries {
		v, d := x.Evaluate(tp, tq).Value().ReadData(), x.Derivative(tp, tq).Value().ReadData()
		for ch := range 2 {
			for _, c := range []struct {
				name      string
				got, want float64
			}{{"value", v[ch], ref.Natural.Value[q][0][ch]}, {"derivative", d[ch], ref.Natural.Deriv[q][0][ch]}} {
				err := math.Abs(c.got - c.want)
				worst = max(worst, err/max(1, math.Abs(c.want)))
				if err > 1e-12*max(1, math.Abs(c.want)) {
					t.Errorf("%s at t = %v [%d]: %.17g, want %.17g", c.name, tq, ch, c.got, c.want)
				}
			}
		}
	}
	t.Logf("%d knots, %d queries, worst error %.3g", len(ref.Times), len(ref.Queries), worst)
}

// TestThirdOrder: third derivatives through the spline's solve node (its
// backward in ops is the node again, differentiated once more).
func TestThirdOrder(t *testing.T) {
	ref := loadReference(t)
	p := autograd.NewParam("obs", obsTensor(ref.Obs))
	mk := func(ts []float64, y autograd.Var[float64]) (interp.Interpolant[float64], error) {
		return interp.NewNaturalCubic(ts, y)
	}
	if _, err := autograd.CheckHigherOrder(loss(mk, ref.Times, p), []*autograd.Param[float64]{p}, 3, autograd.GradCheckOptions{AbsTol: 1e-5, RelTol: 1e-4, Seed: 7}); err != nil {
		t.Fatal(err)
	}
}

// TestJVP: a forward-mode derivative through the spline (the double-VJP
// construction runs the solve node's backward in ops) equals the spline
// of the tangent, since the spline is linear in the observations.
func TestJVP(t *testing.T) {
	ref := loadReference(t)
	tp := newTape()
	y := tp.Input(obsTensor(ref.Obs))
	v := obsTensor(ref.Obs)
	for i, d := range v.Data() {
		v.Data()[i] = math.Sin(3*float64(i)) + 0.1*d
	}
	f := func(y autograd.Var[float64]) autograd.Var[float64] {
		x, err := interp.NewNaturalCubic(ref.Times, y)
		if err != nil {
			t.Fatal(err)
		}
		return autograd.Concat(0, x.Evaluate(tp, 0.6), x.Derivative(tp, 1.3))
	}
	_, jv, err := autograd.JVP(f, y, tp.Const(v))
	if err != nil {
		t.Fatal(err)
	}
	want := f(tp.Const(v)).Value().ReadData()
	for i, g := range jv.Value().ReadData() {
		if math.Abs(g-want[i]) > 1e-12 {
			t.Errorf("JVP[%d] = %v, want %v", i, g, want[i])
		}
	}
}

// TestCausal: the backward Hermite control on piece i depends on
// y_{i−1}, y_i, y_{i+1} only; the natural spline on every observation.
func TestCausal(t *testing.T) {
	ref := loadReference(t)
	n := len(ref.Times)
	for _, c := range []struct {
		name   string
		causal bool
		make   constructor
	}{
		{"HermiteBackward", true, constructors[2].make},
		{"NaturalCubic", false, constructors[1].make},
	} {
		for i := range n - 1 {
			tq := (ref.Times[i] + 2*ref.Times[i+1]) / 3
			tp := newTape()
			y := tp.Input(obsTensor(ref.Obs))
			x, err := c.make(ref.Times, y)
			if err != nil {
				t.Fatal(err)
			}
			out := autograd.Add(autograd.Sum(x.Evaluate(tp, tq)), autograd.Sum(x.Derivative(tp, tq)))
			if err := tp.Backward(out); err != nil {
				t.Fatal(err)
			}
			g := y.Grad().ReadData()
			for k := range n {
				dep := false
				for b := range 2 {
					for ch := range 3 {
						dep = dep || g[(b*n+k)*3+ch] != 0
					}
				}
				want := !c.causal || (k >= i-1 && k <= i+1)
				if dep != want {
					t.Errorf("%s at t = %v (piece %d): depends on y_%d: %v, want %v", c.name, tq, i, k, dep, want)
				}
			}
		}
	}
}

// TestFloat32: the same code in float32 agrees with float64 to float32's
// precision.
func TestFloat32(t *testing.T) {
	ref := loadReference(t)
	obs64 := obsTensor(ref.Obs)
	obs32 := tensor.New[float32](obs64.Shape()...)
	for i, v := range obs64.ReadData() {
		obs32.Data()[i] = float32(v)
	}
	tp32 := autograd.NewTape(tensor.EngineFor[float32](tensor.Default()))
	tp64 := newTape()
	x32, err := interp.NewNaturalCubic(ref.Times, tp32.Const(obs32))
	if err != nil {
		t.Fatal(err)
	}
	x64, _ := interp.NewNaturalCubic(ref.Times, tp64.Const(obs64))
	for _, tq := range ref.Queries {
		g32, g64 := x32.Evaluate(tp32, tq).Value().ReadData(), x64.Evaluate(tp64, tq).Value().ReadData()
		d32, d64 := x32.Derivative(tp32, tq).Value().ReadData(), x64.Derivative(tp64, tq).Value().ReadData()
		for i := range g64 {
			if math.Abs(float64(g32[i])-g64[i]) > 1e-5*max(1, math.Abs(g64[i])) || math.Abs(float64(d32[i])-d64[i]) > 1e-4*max(1, math.Abs(d64[i])) {
				t.Errorf("t = %v [%d]: float32 %v, %v; float64 %v, %v", tq, i, g32[i], d32[i], g64[i], d64[i])
			}
		}
	}
}

// TestNoGrad: built in no-grad mode, the interpolant computes the same
// values and records nothing that needs a gradient.
func TestNoGrad(t *testing.T) {
	ref := loadReference(t)
	for _, c := range constructors {
		tp := newTape()
		y := tp.Input(obsTensor(ref.Obs))
		want, err := c.make(ref.Times, y)
		if err != nil {
			t.Fatal(err)
		}
		tp.SetNoGrad(true)
		x, err := c.make(ref.Times, y)
		if err != nil {
			t.Fatal(err)
		}
		v := x.Evaluate(tp, 0.7)
		if v.RequiresGrad() {
			t.Errorf("%s: a value recorded in no-grad mode requires a gradient", c.name)
		}
		got, w := v.Value().ReadData(), want.Evaluate(tp, 0.7).Value().ReadData()
		for i := range w {
			if got[i] != w[i] {
				t.Errorf("%s: no-grad value %v, want %v", c.name, got[i], w[i])
			}
		}
	}
}

// TestMisuse: another tape, or t NaN, panics naming the interpolant.
func TestMisuse(t *testing.T) {
	ref := loadReference(t)
	tp := newTape()
	x, err := interp.NewHermiteBackward(ref.Times, tp.Const(obsTensor(ref.Obs)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		call func()
		want string
	}{
		{"other tape", func() { x.Evaluate(newTape(), 0.5) }, "interp: HermiteBackward.Evaluate: tape is not the tape of the observations"},
		{"NaN", func() { x.Derivative(tp, math.NaN()) }, "interp: HermiteBackward.Derivative: t is NaN"},
	} {
		func() {
			defer func() {
				r := recover()
				if e, _ := r.(error); e == nil || !strings.Contains(e.Error(), c.want) {
					t.Errorf("%s: panic %v (%T), want an error saying %q", c.name, r, r, c.want)
				}
			}()
			// tensor.Recover, which recovers bad shapes, lets a misuse
			// through, as autograd's.
			var err error
			defer func() {
				if err != nil {
					t.Errorf("%s: tensor.Recover made %v of a misuse", c.name, err)
				}
			}()
			defer tensor.Recover(&err)
			c.call()
		}()
	}
}

// TestReset: a tape reused from pass to pass (its Scratch buffers handed
// out again) gives each pass's interpolant the values and gradients of a
// fresh tape.
func TestReset(t *testing.T) {
	ref := loadReference(t)
	tp := newTape()
	for pass := range 3 {
		obs := obsTensor(ref.Obs)
		for i := range obs.Data() {
			obs.Data()[i] += float64(pass) * math.Cos(float64(i))
		}
		run := func(tp *autograd.Tape[float64]) ([]float64, []float64) {
			y := tp.Input(obs)
			x, err := interp.NewNaturalCubic(ref.Times, y)
			if err != nil {
				t.Fatal(err)
			}
			v := x.Evaluate(tp, 1.2)
			vals := append([]float64(nil), v.Value().ReadData()...)
			if err := tp.Backward(autograd.Sum(autograd.Square(v))); err != nil {
				t.Fatal(err)
			}
			return vals, append([]float64(nil), y.Grad().ReadData()...)
		}
		tp.Reset()
		gotV, gotG := run(tp)
		wantV, wantG := run(newTape())
		for i := range wantV {
			if gotV[i] != wantV[i] {
				t.Errorf("pass %d: value[%d] %v, want %v", pass, i, gotV[i], wantV[i])
			}
		}
		for i := range wantG {
			if gotG[i] != wantG[i] {
				t.Errorf("pass %d: gradient[%d] %v, want %v", pass, i, gotG[i], wantG[i])
			}
		}
	}
}
