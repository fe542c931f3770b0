package autograd_test

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

// energy is f(x) = Σ w·sin(x)·x², a scalar, reading the parameter w:
// ∂f/∂x = w·(cos(x)·x² + 2x·sin(x)).
func energy(tp *ag.Tape[float64], w *ag.Param[float64]) func(x ag.Var[float64]) ag.Var[float64] {
	return func(x ag.Var[float64]) ag.Var[float64] {
		return ag.Sum(ag.Mul(tp.Param(w), ag.Mul(ag.Sin(x), ag.Square(x))))
	}
}

func energyGrad(w, x []float64) []float64 {
	g := make([]float64, len(x))
	for i, v := range x {
		g[i] = w[i] * (math.Cos(v)*v*v + 2*v*math.Sin(v))
	}
	return g
}

// TestTransformsValues: GradOf, ValueAndGrad and VJPOf give the closed
// form on a recording tape, in no-grad mode, and at an x that requires no
// gradient; in no-grad mode their results are constants.
func TestTransformsValues(t *testing.T) {
	xs := []float64{0.3, -1.2, 2.1}
	w := ag.NewParam("w", tensor.FromSlice([]float64{1.5, -0.5, 0.25}, 3))
	want := energyGrad(w.Value.Data(), xs)
	approx := cmpopts.EquateApprox(0, 1e-14)
	for _, tc := range []struct {
		name   string
		noGrad bool
		leaf   func(tp *ag.Tape[float64], x *tensor.Tensor[float64]) ag.Var[float64]
	}{
		{"input", false, (*ag.Tape[float64]).Input},
		{"const", false, (*ag.Tape[float64]).Const},
		{"no-grad", true, (*ag.Tape[float64]).Const},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
			tp.SetNoGrad(tc.noGrad)
			x := tc.leaf(tp, tensor.FromSlice(xs, 3))
			f := energy(tp, w)
			g, err := ag.GradOf(f, x)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, g.Value().Data(), approx); d != "" {
				t.Errorf("GradOf (-want +got):\n%s", d)
			}
			y, g2, err := ag.ValueAndGrad(f, x)
			if err != nil {
				t.Fatal(err)
			}
			var fy float64
			for i, v := range xs {
				fy += w.Value.Data()[i] * math.Sin(v) * v * v
			}
			if d := cmp.Diff([]float64{fy}, y.Value().Data(), approx); d != "" {
				t.Errorf("ValueAndGrad's value (-want +got):\n%s", d)
			}
			if d := cmp.Diff(want, g2.Value().Data(), approx); d != "" {
				t.Errorf("ValueAndGrad's gradient (-want +got):\n%s", d)
			}
			// VJPOf of x ↦ sin(x)·x² with u: u ⊙ the derivative.
			u := tp.Const(tensor.FromSlice([]float64{2, -1, 0.5}, 3))
			_, vjp, err := ag.VJPOf(func(x ag.Var[float64]) ag.Var[float64] { return ag.Mul(ag.Sin(x), ag.Square(x)) }, x, u)
			if err != nil {
				t.Fatal(err)
			}
			wantVJP := energyGrad(u.Value().Data(), xs)
			if d := cmp.Diff(wantVJP, vjp.Value().Data(), approx); d != "" {
				t.Errorf("VJPOf (-want +got):\n%s", d)
			}
			if tc.noGrad && (g.RequiresGrad() || g2.RequiresGrad() || vjp.RequiresGrad() || !tp.NoGrad()) {
				t.Error("in no-grad mode: a result requires a gradient, or the mode was not restored")
			}
			if !tc.noGrad && !g.RequiresGrad() {
				t.Error("on a recording tape: the gradient is not differentiable (it depends on w)")
			}
		})
	}
}

// TestTransformsCompose: the transforms nest — the gradient of a gradient's
// norm, the JVP of a gradient (equal to HVP), a VJP of a gradient — and a
// loss built from them has second derivatives that match central
// differences (in x and in the parameter w).
func TestTransformsCompose(t *testing.T) {
	x0 := ag.NewParam("x", tensor.FromSlice([]float64{0.3, -1.2, 2.1}, 3))
	w := ag.NewParam("w", tensor.FromSlice([]float64{1.5, -0.5, 0.25}, 3))
	v := tensor.FromSlice([]float64{0.7, 0.1, -0.4}, 3)
	loss := func(tp *ag.Tape[float64]) ag.Var[float64] {
		f := energy(tp, w)
		norm := func(x ag.Var[float64]) ag.Var[float64] {
			g, err := ag.GradOf(f, x)
			if err != nil {
				t.Fatal(err)
			}
			return ag.Sum(ag.Square(g))
		}
		gg, err := ag.GradOf(norm, tp.Param(x0))
		if err != nil {
			t.Fatal(err)
		}
		gradF := func(x ag.Var[float64]) ag.Var[float64] {
			g, err := ag.GradOf(f, x)
			if err != nil {
				t.Fatal(err)
			}
			return g
		}
		_, jv, err := ag.JVP(gradF, tp.Param(x0), tp.Const(v))
		if err != nil {
			t.Fatal(err)
		}
		_, vj, err := ag.VJPOf(gradF, tp.Param(x0), tp.Const(v))
		if err != nil {
			t.Fatal(err)
		}
		return ag.Add(ag.Sum(ag.Mul(gg, gg)), ag.Add(ag.Sum(ag.Square(jv)), ag.Sum(ag.Sin(vj))))
	}
	rep, err := ag.CheckGradients(loss, []*ag.Param[float64]{x0, w}, ag.GradCheckOptions{Step: 1e-5, AbsTol: 1e-7, RelTol: 1e-6})
	if err != nil {
		t.Fatalf("%v\n%v", err, rep)
	}
	// The JVP of the gradient is the Hessian-vector product, and so is the
	// VJP (the Hessian is symmetric).
	tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
	f := energy(tp, w)
	gradF := func(x ag.Var[float64]) ag.Var[float64] { g, _ := ag.GradOf(f, x); return g }
	_, hv, err := ag.HVP(f, tp.Input(x0.Value), tp.Const(v))
	if err != nil {
		t.Fatal(err)
	}
	_, jv, _ := ag.JVP(gradF, tp.Input(x0.Value), tp.Const(v))
	_, vj, _ := ag.VJPOf(gradF, tp.Input(x0.Value), tp.Const(v))
	approx := cmpopts.EquateApprox(0, 1e-13)
	if d := cmp.Diff(hv.Value().Data(), jv.Value().Data(), approx); d != "" {
		t.Errorf("JVP of GradOf against HVP (-hvp +jvp):\n%s", d)
	}
	if d := cmp.Diff(hv.Value().Data(), vj.Value().Data(), approx); d != "" {
		t.Errorf("VJPOf of GradOf against HVP (-hvp +vjp):\n%s", d)
	}
}

// TestTransformsMisuse: a non-scalar function for a gradient, a function
// returning a Var of another tape or the zero Var, a cotangent of the wrong
// shape and a zero input panic at the call, naming what was wrong.
func TestTransformsMisuse(t *testing.T) {
	eng := tensor.EngineFor[float64](tensor.Default())
	tp, other := ag.NewTape(eng), ag.NewTape(eng)
	x := tp.Input(tensor.FromSlice([]float64{1, 2, 3}, 3))
	id := func(x ag.Var[float64]) ag.Var[float64] { return ag.Square(x) }
	for _, tc := range []struct {
		name string
		call func()
		want []string
	}{
		{"GradOf of a vector", func() { _, _ = ag.GradOf(id, x) }, []string{"ValueAndGrad", "[3]", "scalar"}},
		{"ValueAndGrad of another tape's Var", func() {
			_, _, _ = ag.ValueAndGrad(func(ag.Var[float64]) ag.Var[float64] { return ag.Sum(other.Input(tensor.New[float64](2))) }, x)
		}, []string{"another tape"}},
		{"GradOf of the zero Var", func() {
			_, _ = ag.GradOf(func(ag.Var[float64]) ag.Var[float64] { return ag.Var[float64]{} }, x)
		}, []string{"zero Var"}},
		{"VJPOf with a wrong cotangent", func() {
			_, _, _ = ag.VJPOf(id, x, tp.Const(tensor.New[float64](2)))
		}, []string{"cotangent", "[2]", "[3]"}},
		{"GradOf at the zero Var", func() { _, _ = ag.GradOf(id, ag.Var[float64]{}) }, []string{"zero Var"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := mustPanic(t, tc.call)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("panic %q does not say %q", msg, w)
				}
			}
		})
	}
}

// TestHVPDirectionFromX: a direction computed from x (v = 0.3·x, as a
// field's direction along its state) is held fixed: HVP gives ∇²f·v, the
// product at a constant of the same value. (It added ∂v/∂xᵀ·∇f = 0.3·∇f.)
func TestHVPDirectionFromX(t *testing.T) {
	w := ag.NewParam("w", tensor.FromSlice([]float64{1.5, -0.5, 0.25}, 3))
	tp := ag.NewTape(tensor.EngineFor[float64](tensor.Default()))
	x := tp.Input(tensor.FromSlice([]float64{0.3, -1.2, 2.1}, 3))
	f := energy(tp, w)
	_, fromX, err := ag.HVP(f, x, ag.Scale(x, 0.3))
	if err != nil {
		t.Fatal(err)
	}
	v := tensor.FromSlice([]float64{0.09, -0.36, 0.63}, 3)
	_, fixed, err := ag.HVP(f, x, tp.Const(v))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(fixed.Value().Data(), fromX.Value().Data(), cmpopts.EquateApprox(0, 1e-14)); d != "" {
		t.Errorf("HVP with v = 0.3·x against v as a constant (-const +fromX):\n%s", d)
	}
}

// TestPullbackValueWithGrad: Pullback.Value of a function that calls Grad
// (a Hamiltonian field's ∇H) evaluates it again recording gradients the
// first time — twice that once, then once a call — and gives ∇f; reading
// its input's value there marks nothing (a VJP at that tensor afterwards is
// no ErrVJPOfRecorded); a panic of f's own goes on as it was.
func TestPullbackValueWithGrad(t *testing.T) {
	eng := tensor.EngineFor[float64](tensor.Default())
	w := ag.NewParam("w", tensor.FromSlice([]float64{1.5, -0.5, 0.25}, 3))
	x := tensor.FromSlice([]float64{0.3, -1.2, 2.1}, 3)
	pb := ag.NewPullback(eng)
	calls := 0
	f := func(tp *ag.Tape[float64], in []ag.Var[float64]) ag.Var[float64] {
		calls++
		_ = in[0].Value()
		gs, err := ag.Grad([]ag.Var[float64]{energy(tp, w)(in[0])}, in, ag.GradOptions[float64]{})
		if err != nil {
			t.Fatal(err)
		}
		return gs.Inputs[0]
	}
	want := energyGrad(w.Value.Data(), x.Data())
	// A function without Grad: evaluated once a call, in no-grad mode.
	plain := 0
	sq := ag.NewPullback(eng)
	for range 2 {
		got := sq.Value(func(tp *ag.Tape[float64], in []ag.Var[float64]) ag.Var[float64] {
			plain++
			if !tp.NoGrad() {
				t.Error("a function without Grad evaluated recording")
			}
			return ag.Square(in[0])
		}, []*tensor.Tensor[float64]{x})
		if d := cmp.Diff([]float64{0.09, 1.44, 4.41}, got.Data(), cmpopts.EquateApprox(0, 1e-15)); d != "" {
			t.Errorf("Value of x² (-want +got):\n%s", d)
		}
	}
	if plain != 2 {
		t.Errorf("a function without Grad ran %d times in two calls, want 2", plain)
	}
	for i, wantCalls := range []int{2, 3} {
		got := pb.Value(f, []*tensor.Tensor[float64]{x})
		if d := cmp.Diff(want, got.Data(), cmpopts.EquateApprox(0, 1e-14)); d != "" {
			t.Errorf("call %d: ∇f (-want +got):\n%s", i, d)
		}
		if calls != wantCalls {
			t.Errorf("call %d: f ran %d times in all, want %d", i, calls, wantCalls)
		}
	}
	if _, _, err := ag.VJP(eng, func(tp *ag.Tape[float64], in []ag.Var[float64]) ag.Var[float64] { return ag.Sum(in[0]) }, []*tensor.Tensor[float64]{x}, tensor.New[float64]()); err != nil {
		t.Errorf("a VJP at the input of a recorded Value: %v", err)
	}
	msg := mustPanic(t, func() {
		ag.NewPullback(eng).Value(func(tp *ag.Tape[float64], in []ag.Var[float64]) ag.Var[float64] {
			panic(errors.New("the field's own failure"))
		}, []*tensor.Tensor[float64]{x})
	})
	if msg != "the field's own failure" {
		t.Errorf("f's panic became %q", msg)
	}
}

// TestGradNoGradMisuse: Grad on a tape in no-grad mode (outside a
// Pullback's Value, which records again) panics naming the transforms that
// work there, also from inside a RowShards function on such a tape.
func TestGradNoGradMisuse(t *testing.T) {
	eng := tensor.EngineFor[float64](tensor.Gonum(2))
	w := ag.NewParam("w", tensor.FromSlice([]float64{1.5, -0.5, 0.25}, 3))
	grad := func(tp *ag.Tape[float64], x ag.Var[float64]) ag.Var[float64] {
		gs, err := ag.Grad([]ag.Var[float64]{energy(tp, w)(x)}, []ag.Var[float64]{x}, ag.GradOptions[float64]{})
		if err != nil {
			t.Fatal(err)
		}
		return gs.Inputs[0]
	}
	rs := ag.NewRowShards(2, []*ag.Param[float64]{w})
	for _, tc := range []struct {
		name string
		call func(tp *ag.Tape[float64])
	}{
		{"on the tape", func(tp *ag.Tape[float64]) { grad(tp, tp.Input(tensor.FromSlice([]float64{1, 2, 3}, 3))) }},
		{"in a RowShards function", func(tp *ag.Tape[float64]) {
			rs.Apply(tp.Input(tensor.New[float64](4, 3)), 0, func(tp *ag.Tape[float64], _ float64, x ag.Var[float64]) ag.Var[float64] {
				return grad(tp, x)
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp := ag.NewTape(eng)
			tp.SetNoGrad(true)
			msg := mustPanic(t, func() { tc.call(tp) })
			if !strings.Contains(msg, "no-grad mode") || !strings.Contains(msg, "GradOf") {
				t.Errorf("panic %q does not say no-grad mode and name GradOf", msg)
			}
		})
	}
}
