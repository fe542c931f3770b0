package odeblock_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/interp"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

var (
	_ odeblock.Control[float64]  = (*interp.NaturalCubic[float64])(nil)
	_ odeblock.Control[float64]  = (*interp.Linear[float64])(nil)
	_ odeblock.Control[float32]  = (*interp.HermiteBackward[float32])(nil)
	_ odeblock.Dynamics[float64] = (*odeblock.CDE[float64])(nil)
)

func cdeTape() *autograd.Tape[float64] {
	return autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
}

// cdeTimes are irregular knot times.
var cdeTimes = []float64{0.2, 0.5, 1.1, 1.3, 2.0, 2.6}

// TestCDELinear: with H = C = 1, f(z) = a·z and the linear control
// X(t) = b·t (a natural spline through points of a line is that line),
// z' = a·b·z, so z(t) = z0·exp(a·b·(t − t0)) at every knot, for each row's
// own slope b and z0.
func TestCDELinear(t *testing.T) {
	const a = 0.8
	slopes, z0 := []float64{0.5, -1.2}, []float64{1.5, -0.3}
	n := len(cdeTimes)
	obs := tensor.New[float64](2, n, 1)
	for r, b := range slopes {
		for k, tk := range cdeTimes {
			obs.Data()[r*n+k] = b * tk
		}
	}
	x, err := interp.NewNaturalCubic(cdeTimes, cdeTape().Const(obs))
	if err != nil {
		t.Fatal(err)
	}
	w := autograd.NewParam("a", tensor.FromSlice([]float64{a}, 1, 1))
	f := odeblock.FieldFunc([]*autograd.Param[float64]{w}, func(tp *autograd.Tape[float64], _ float64, z autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Linear(z, tp.Param(w), autograd.Var[float64]{})
	})
	cde := &odeblock.CDE[float64]{F: f, X: x}
	if s := cde.Span(); s[0] != cdeTimes[0] || s[1] != cdeTimes[n-1] {
		t.Errorf("Span() = %v, want [%v %v]", s, cdeTimes[0], cdeTimes[n-1])
	}
	b := &odeblock.Block[float64]{Dynamics: cde, Times: cdeTimes, Solver: odeblock.Options{RTol: 1e-10, ATol: 1e-10}}
	tp := cdeTape()
	traj, err := b.Trajectory(tp, tp.Const(tensor.FromSlice(append([]float64(nil), z0...), 2, 1)))
	if err != nil {
		t.Fatal(err)
	}
	got := traj.Value().ReadData() // [n, B, H]
	for k, tk := range cdeTimes {
		for r := range 2 {
			want := z0[r] * math.Exp(a*slopes[r]*(tk-cdeTimes[0]))
			if g := got[k*2+r]; math.Abs(g-want) > 1e-8*max(1, math.Abs(want)) {
				t.Errorf("z(%v)[%d] = %.12g, want %.12g", tk, r, g, want)
			}
		}
	}
}

// TestCDEScalarPath: with H = C = 1 and f(z) = a·z, dz = a·z·dX gives
// z(t) = z0·exp(a·(X(t) − X(t0))) for any path X: checked at every knot
// for a natural spline through random observations, and for the linear
// interpolant, whose derivative jumps at the knots, with the knots as
// Options.Jumps; the spline is more accurate with them too.
func TestCDEScalarPath(t *testing.T) {
	const a = 0.7
	rng := rand.New(rand.NewPCG(5, 9))
	n := len(cdeTimes)
	obs := tensor.RandN[float64](rng, 0, 1, 2, n, 1)
	z0 := []float64{1.5, -0.3}
	w := autograd.NewParam("a", tensor.FromSlice([]float64{a}, 1, 1))
	f := odeblock.FieldFunc([]*autograd.Param[float64]{w}, func(tp *autograd.Tape[float64], _ float64, z autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Linear(z, tp.Param(w), autograd.Var[float64]{})
	})
	natural, err := interp.NewNaturalCubic(cdeTimes, cdeTape().Const(obs))
	if err != nil {
		t.Fatal(err)
	}
	linear, err := interp.NewLinear(cdeTimes, cdeTape().Const(obs))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		x     odeblock.Control[float64]
		jumps []float64
		tol   float64
	}{
		// The spline's second derivative jumps at the knots, which the
		// step control sees late: 4e-8 without the knots as jumps.
		{"natural", natural, nil, 1e-7},
		{"natural, jumps", natural, cdeTimes[1 : n-1], 1e-8},
		{"linear", linear, cdeTimes[1 : n-1], 1e-8},
	} {
		b := &odeblock.Block[float64]{Dynamics: &odeblock.CDE[float64]{F: f, X: c.x}, Times: cdeTimes, Solver: odeblock.Options{RTol: 1e-10, ATol: 1e-10, Stops: odeblock.Stops{Jumps: c.jumps}}}
		tp := cdeTape()
		traj, err := b.Trajectory(tp, tp.Const(tensor.FromSlice(append([]float64(nil), z0...), 2, 1)))
		if err != nil {
			t.Fatal(err)
		}
		got := traj.Value().ReadData()
		for k, tk := range cdeTimes {
			for r := range 2 {
				want := z0[r] * math.Exp(a*(obs.ReadData()[r*n+k]-obs.ReadData()[r*n]))
				if g := got[k*2+r]; math.Abs(g-want) > c.tol*max(1, math.Abs(want)) {
					t.Errorf("%s: z(%v)[%d] = %.12g, want %.12g", c.name, tk, r, g, want)
				}
			}
		}
	}
}

// TestCDEEval: Eval's layout: f's output column h·C + c multiplies
// channel c of X'(t), summed over c, per batch row.
func TestCDEEval(t *testing.T) {
	const bn, h, ch = 2, 3, 2
	rng := rand.New(rand.NewPCG(3, 5))
	obs := tensor.RandN[float64](rng, 0, 1, bn, len(cdeTimes), ch)
	x, err := interp.NewLinear(cdeTimes, cdeTape().Const(obs))
	if err != nil {
		t.Fatal(err)
	}
	w := autograd.NewParam("w", tensor.RandN[float64](rng, 0, 1, h*ch, h))
	f := odeblock.FieldFunc([]*autograd.Param[float64]{w}, func(tp *autograd.Tape[float64], _ float64, z autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Linear(z, tp.Param(w), autograd.Var[float64]{})
	})
	cde := &odeblock.CDE[float64]{F: f, X: x}
	tp := cdeTape()
	z := tensor.RandN[float64](rng, 0, 1, bn, h)
	got := cde.Eval(tp, 0.8, tp.Const(z)).Value()
	if s := got.Shape(); len(s) != 2 || s[0] != bn || s[1] != h {
		t.Fatalf("Eval shape %v, want [%d %d]", s, bn, h)
	}
	dx := x.DerivativeAt(0.8).ReadData()
	W, Z := w.Value.ReadData(), z.ReadData()
	for r := range bn {
		for i := range h {
			want := 0.0
			for c := range ch {
				fv := 0.0 // f(z)[r, i·C + c] = Σ_j W[i·C + c, j]·z[r, j]
				for j := range h {
					fv += W[(i*ch+c)*h+j] * Z[r*h+j]
				}
				want += fv * dx[r*ch+c]
			}
			if g := got.ReadData()[r*h+i]; math.Abs(g-want) > 1e-13 {
				t.Errorf("Eval[%d %d] = %v, want %v", r, i, g, want)
			}
		}
	}
}

// cdeModel is a CDE with a tanh MLP field (B = 2, H = 3, C = 2) driven by
// a natural spline over the irregular cdeTimes, built once on a data tape
// of its own (the block evaluates it on other tapes), and the initial
// state z0 = W0·X(t0) + b0.
type cdeModel struct {
	cde    *odeblock.CDE[float64]
	x      *interp.NaturalCubic[float64]
	w0, b0 *autograd.Param[float64]
}

func newCDEModel(t *testing.T) *cdeModel {
	const bn, h, ch = 2, 3, 2
	rng := rand.New(rand.NewPCG(11, 13))
	obs := tensor.RandN[float64](rng, 0, 0.5, bn, len(cdeTimes), ch)
	x, err := interp.NewNaturalCubic(cdeTimes, cdeTape().Const(obs))
	if err != nil {
		t.Fatal(err)
	}
	m := &cdeModel{
		x:  x,
		w0: autograd.NewParam("w0", tensor.RandN[float64](rng, 0, 0.5, h, ch)),
		b0: autograd.NewParam("b0", tensor.RandN[float64](rng, 0, 0.5, h)),
	}
	m.cde = &odeblock.CDE[float64]{F: newMLP(rng, "f", h, 4, h*ch, 0.4), X: x}
	return m
}

func (m *cdeModel) params() []*autograd.Param[float64] {
	return append([]*autograd.Param[float64]{m.w0, m.b0}, m.cde.Params()...)
}

// loss records Σ z(t_{n−1})² over the batch through the block.
func (m *cdeModel) loss(b *odeblock.Block[float64]) func(tp *autograd.Tape[float64]) (autograd.Var[float64], error) {
	return func(tp *autograd.Tape[float64]) (autograd.Var[float64], error) {
		x0 := tp.Const(m.x.ValueAt(cdeTimes[0]))
		z0 := autograd.Linear(x0, tp.Param(m.w0), tp.Param(m.b0))
		z, err := b.Forward(tp, z0)
		if err != nil {
			return autograd.Var[float64]{}, err
		}
		return autograd.Sum(autograd.Square(z)), nil
	}
}

// cdeGrads runs one pass of f with Backward and returns every
// parameter's gradient in turn.
func cdeGrads(t *testing.T, f func(*autograd.Tape[float64]) (autograd.Var[float64], error), ps []*autograd.Param[float64]) []float64 {
	t.Helper()
	autograd.ZeroGrads(ps)
	tp := cdeTape()
	l, err := f(tp)
	if err != nil {
		t.Fatal(err)
	}
	if err := tp.Backward(l); err != nil {
		t.Fatal(err)
	}
	var all []float64
	for _, p := range ps {
		all = append(all, p.Grad.Data()...)
	}
	return all
}

// TestCDEGradients: the gradients with respect to f's parameters and the
// initial map's (through z0), in every gradient mode, against central
// differences, on fixed rk4 steps with the control's knots as jumps (the
// spline's second derivative jumps there): smooth differences, free of an
// adaptive solve's step-control noise (which, at 1e-12, differed between
// the pure-Go and the OpenBLAS builds by 2e-5 relative). The modes that
// differentiate the discrete solve (Backprop, Checkpoint, Recursive) are
// exact there; the adjoint and interpolated modes solve the adjoint
// equation on the same steps, O(h⁴) away (TestCDEModesAgree compares them
// with Backprop at tight tolerances).
func TestCDEGradients(t *testing.T) {
	m := newCDEModel(t)
	ps := m.params()
	for _, mode := range modes {
		opts := odeblock.Options{Method: "rk4", Step: 0.05, Stops: odeblock.Stops{Jumps: cdeTimes}}
		check := autograd.GradCheckOptions{AbsTol: 1e-7, RelTol: 1e-6, MaxElems: 4}
		switch mode.(type) {
		case odeblock.Adjoint, odeblock.Interpolated:
			opts.Step = 0.005 // the adjoint equation's error, O(h⁴), well below the tolerance
		}
		b := &odeblock.Block[float64]{Dynamics: m.cde, Times: m.cde.Span(), Mode: mode, Solver: opts}
		rep, err := autograd.CheckGradients(m.loss(b), ps, check)
		if err != nil {
			t.Errorf("%v: %v", mode, err)
		} else {
			t.Logf("%v: %v", mode, rep)
		}
	}
}

// TestCDEModesAgree: at the same adaptive tolerance (1e-10), every mode's
// gradients agree with Backprop's.
func TestCDEModesAgree(t *testing.T) {
	m := newCDEModel(t)
	ps := m.params()
	opts := odeblock.Options{RTol: 1e-10, ATol: 1e-10}
	ref := cdeGrads(t, m.loss(&odeblock.Block[float64]{Dynamics: m.cde, Times: m.cde.Span(), Mode: odeblock.Backprop{}, Solver: opts}), ps)
	for _, mode := range modes {
		got := cdeGrads(t, m.loss(&odeblock.Block[float64]{Dynamics: m.cde, Times: m.cde.Span(), Mode: mode, Solver: opts}), ps)
		if d := cmp.Diff(ref, got, cmpopts.EquateApprox(1e-6, 1e-7)); d != "" {
			t.Errorf("%v against Backprop (-backprop +mode):\n%s", mode, d)
		}
	}
}

// TestCDEShapes: a field whose output is not [B, H·C], a control of
// another batch and a state not of rank 2 panic naming the shapes.
func TestCDEShapes(t *testing.T) {
	const bn, h, ch = 2, 3, 2
	rng := rand.New(rand.NewPCG(1, 2))
	x, err := interp.NewNaturalCubic(cdeTimes, cdeTape().Const(tensor.RandN[float64](rng, 0, 1, bn, len(cdeTimes), ch)))
	if err != nil {
		t.Fatal(err)
	}
	field := func(out int) odeblock.Field[float64] {
		w := autograd.NewParam("w", tensor.RandN[float64](rng, 0, 1, out, h))
		return odeblock.FieldFunc([]*autograd.Param[float64]{w}, func(tp *autograd.Tape[float64], _ float64, z autograd.Var[float64]) autograd.Var[float64] {
			return autograd.Linear(z, tp.Param(w), autograd.Var[float64]{})
		})
	}
	for _, c := range []struct {
		name string
		cde  *odeblock.CDE[float64]
		z    []int
		want []string
	}{
		// F made for 3 channels, the control has 2.
		{"channels", &odeblock.CDE[float64]{F: field(h * 3), X: x}, []int{bn, h}, []string{"field output of shape [2 9]", "[2 6]", "control derivative of shape [2 2]", "state of shape [2 3]"}},
		{"batch", &odeblock.CDE[float64]{F: field(h * ch), X: x}, []int{3, h}, []string{"control derivative of shape [2 2]", "state of shape [3 3]"}},
		{"rank", &odeblock.CDE[float64]{F: field(h * ch), X: x}, []int{bn * h}, []string{"state of shape [6]"}},
	} {
		func() {
			defer func() {
				r := recover()
				msg := fmt.Sprint(r)
				for _, w := range c.want {
					if !strings.Contains(msg, w) {
						t.Errorf("%s: panic %q, want one containing %q", c.name, msg, w)
					}
				}
			}()
			tp := cdeTape()
			c.cde.Eval(tp, 0.5, tp.Const(tensor.New[float64](c.z...)))
		}()
	}
}

// TestCDEFloat32: a float32 CDE (its spline built from float32
// observations, rtol = atol = 1e-6) gives the float64 one's loss and
// adjoint gradients to 1e-4 and 1e-3.
func TestCDEFloat32(t *testing.T) {
	m := newCDEModel(t)
	b64 := &odeblock.Block[float64]{Dynamics: m.cde, Times: m.cde.Span(), Solver: odeblock.Options{RTol: 1e-8, ATol: 1e-8}}
	tp := cdeTape()
	l64, err := m.loss(b64)(tp)
	if err != nil {
		t.Fatal(err)
	}
	autograd.ZeroGrads(m.params())
	if err := tp.Backward(l64); err != nil {
		t.Fatal(err)
	}
	to32 := func(x *tensor.Tensor[float64]) *tensor.Tensor[float32] {
		y := tensor.New[float32](x.Shape()...)
		for i, v := range x.ReadData() {
			y.Data()[i] = float32(v)
		}
		return y
	}
	mlp := m.cde.F.(*mlp)
	p32 := func(p *autograd.Param[float64]) *autograd.Param[float32] {
		return autograd.NewParam(p.Name, to32(p.Value))
	}
	w1, b1, w2, b2, w0, b0 := p32(mlp.w1), p32(mlp.b1), p32(mlp.w2), p32(mlp.b2), p32(m.w0), p32(m.b0)
	f := odeblock.FieldFunc([]*autograd.Param[float32]{w1, b1, w2, b2}, func(tp *autograd.Tape[float32], t float64, h autograd.Var[float32]) autograd.Var[float32] {
		z := autograd.Tanh(autograd.Linear(autograd.ConcatTime(h, float32(t)), tp.Param(w1), tp.Param(b1)))
		return autograd.Linear(z, tp.Param(w2), tp.Param(b2))
	})
	obs := tensor.New[float64](2, len(cdeTimes), 2)
	for k, tk := range cdeTimes { // the float64 spline's knot values
		v := m.x.ValueAt(tk).ReadData()
		for r := range 2 {
			copy(obs.Data()[(r*len(cdeTimes)+k)*2:], v[r*2:r*2+2])
		}
	}
	x, err := interp.NewNaturalCubic(cdeTimes, autograd.NewTape(tensor.EngineFor[float32](tensor.Default())).Const(to32(obs)))
	if err != nil {
		t.Fatal(err)
	}
	cde := &odeblock.CDE[float32]{F: f, X: x}
	b32 := &odeblock.Block[float32]{Dynamics: cde, Times: cde.Span(), Solver: odeblock.Options{RTol: 1e-6, ATol: 1e-6}}
	tp32 := autograd.NewTape(tensor.EngineFor[float32](tensor.Default()))
	z0 := autograd.Linear(tp32.Const(x.ValueAt(cdeTimes[0])), tp32.Param(w0), tp32.Param(b0))
	z, err := b32.Forward(tp32, z0)
	if err != nil {
		t.Fatal(err)
	}
	l32 := autograd.Sum(autograd.Square(z))
	if err := tp32.Backward(l32); err != nil {
		t.Fatal(err)
	}
	if got, want := float64(l32.Item()), l64.Item(); math.Abs(got-want) > 1e-4*max(1, math.Abs(want)) {
		t.Errorf("float32 loss %v, float64 %v", got, want)
	}
	for i, pair := range []struct {
		g32 *tensor.Tensor[float32]
		g64 *tensor.Tensor[float64]
	}{{w1.Grad, mlp.w1.Grad}, {b2.Grad, mlp.b2.Grad}, {w0.Grad, m.w0.Grad}, {b0.Grad, m.b0.Grad}} {
		for k, v := range pair.g64.ReadData() {
			if g := float64(pair.g32.ReadData()[k]); math.Abs(g-v) > 1e-3*max(1, math.Abs(v)) {
				t.Errorf("parameter %d [%d]: float32 gradient %v, float64 %v", i, k, g, v)
			}
		}
	}
}

// ExampleCDE solves the scalar CDE dz = a·z·dX driven by a natural spline
// through observations at irregular times, whose solution is
// z0·exp(a·(X(t) − X(t0))) whatever the path, from z0 = X(t0), and takes
// the gradient of z(t_{n−1}) with respect to a by the adjoint.
func ExampleCDE() {
	times := []float64{0, 0.4, 1.5, 2}
	obs := []float64{1, 0.5, -0.2, 0.3}                                   // [B=1, n=4, C=1]
	data := autograd.NewTape(tensor.EngineFor[float64](tensor.Default())) // the control's own tape
	x, err := interp.NewNaturalCubic(times, data.Const(tensor.FromSlice(obs, 1, 4, 1)))
	if err != nil {
		fmt.Println(err)
		return
	}
	a := autograd.NewParam("a", tensor.FromSlice([]float64{0.5}, 1, 1))
	f := odeblock.FieldFunc([]*autograd.Param[float64]{a}, func(tp *autograd.Tape[float64], _ float64, z autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Linear(z, tp.Param(a), autograd.Var[float64]{}) // [B, H·C] = [1, 1]
	})
	cde := &odeblock.CDE[float64]{F: f, X: x}
	blk := &odeblock.Block[float64]{Dynamics: cde, Times: cde.Span(), Solver: odeblock.Options{RTol: 1e-10, ATol: 1e-10}}
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	z, err := blk.Forward(tp, tp.Const(x.ValueAt(times[0])))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := tp.Backward(z); err != nil {
		fmt.Println(err)
		return
	}
	d := obs[3] - obs[0]
	fmt.Printf("z(2) = %.6f, exact %.6f\n", z.Item(), obs[0]*math.Exp(0.5*d))
	fmt.Printf("dz(2)/da = %.6f, exact %.6f\n", a.Grad.ReadData()[0], obs[0]*d*math.Exp(0.5*d))
	// Output:
	// z(2) = 0.704688, exact 0.704688
	// dz(2)/da = -0.493282, exact -0.493282
}
