package autograd_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// sinMix is a custom node with a hand-written derivative:
//
//	z = x ⊙ sin(w) + w²,  ∂z/∂x = sin(w),  ∂z/∂w = x ⊙ cos(w) + 2w.
func sinMix[T tensor.Float](x, w ag.Var[T]) ag.Var[T] {
	xv, wv := x.Value(), w.Value()
	z := tensor.New[T](xv.Shape()...)
	for i, a := range xv.Data() {
		b := float64(wv.Data()[i])
		z.Data()[i] = T(float64(a)*math.Sin(b) + b*b)
	}
	return ag.Custom("sinMix", z, func(gy *tensor.Tensor[T]) ([]*tensor.Tensor[T], error) {
		gx := tensor.New[T](xv.Shape()...)
		gw := tensor.New[T](wv.Shape()...)
		for i, g := range gy.Data() {
			a, b := float64(xv.Data()[i]), float64(wv.Data()[i])
			gx.Data()[i] = T(float64(g) * math.Sin(b))
			gw.Data()[i] = T(float64(g) * (a*math.Cos(b) + 2*b))
		}
		return []*tensor.Tensor[T]{gx, gw}, nil
	}, x, w)
}

func TestCustomNodeGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	x := ag.NewParam("x", tensor.RandN[float64](rng, 0, 1, 2, 3))
	w := ag.NewParam("w", tensor.RandN[float64](rng, 0, 1, 2, 3))
	a := ag.NewParam("a", tensor.RandN[float64](rng, 0, 1, 2, 3))
	// The custom node sits between ops, and its input x is used twice.
	f := func(tp *ag.Tape[float64]) ag.Var[float64] {
		xv := ag.Mul(tp.Param(x), tp.Param(a))
		return ag.Tanh(ag.Add(sinMix(xv, tp.Param(w)), xv))
	}
	rep, err := ag.CheckGradients(f, []*ag.Param[float64]{x, w, a}, ag.GradCheckOptions{AbsTol: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep)
}

// euler2 is a two-step explicit Euler solve of h' = f(h) = tanh(W·h + b)
// over [0, 1], as a custom node whose backward runs the discrete adjoint,
// calling VJP of f on an inner tape at each step while the outer tape's
// Backward is running. It stands in for an ODE block.
//
// With redirect false the parameters are not inputs of the node: VJP adds
// their gradients into Param.Grad ("parameters touched inside accumulate
// their own grads"). With redirect true they are inputs, VJP puts their
// per-step gradients into the node's own accumulators, and the node returns
// them as the gradients of those inputs.
type euler2 struct {
	w, b     *ag.Param[float64]
	pb       *ag.Pullback[float64]
	redirect bool
	calls    int // VJP calls, to check they happened
}

const eulerDt = 0.5

func (m *euler2) f(tp *ag.Tape[float64], in []ag.Var[float64]) ag.Var[float64] {
	return ag.Tanh(ag.Linear(in[0], tp.Param(m.w), tp.Param(m.b)))
}

// evalF returns f(h) computed on a no-grad tape.
func (m *euler2) evalF(eng tensor.Engine[float64], h *tensor.Tensor[float64]) *tensor.Tensor[float64] {
	tp := ag.NewTape(eng)
	tp.SetNoGrad(true)
	return m.f(tp, []ag.Var[float64]{tp.Const(h)}).Value().Clone()
}

func (m *euler2) apply(tp *ag.Tape[float64], h ag.Var[float64]) ag.Var[float64] {
	eng := tp.Engine()
	h0 := h.Value().Clone()
	h1 := h0.Clone().Axpy(eulerDt, m.evalF(eng, h0))
	h2 := h1.Clone().Axpy(eulerDt, m.evalF(eng, h1))
	inputs := []ag.Var[float64]{h}
	if m.redirect {
		inputs = append(inputs, tp.Param(m.w), tp.Param(m.b))
	}
	return ag.Custom("euler2", h2, func(gy *tensor.Tensor[float64]) ([]*tensor.Tensor[float64], error) {
		a := gy.Clone()
		da := tensor.New[float64](a.Shape()...)
		gw, gb := tensor.New[float64](m.w.Value.Shape()...), tensor.New[float64](m.b.Value.Shape()...)
		sw, sb := tensor.New[float64](m.w.Value.Shape()...), tensor.New[float64](m.b.Value.Shape()...)
		for _, hk := range []*tensor.Tensor[float64]{h1, h0} {
			// a_k = a_{k+1} + dt·a_{k+1}ᵀ ∂f/∂h(h_k); θ gets dt·a_{k+1}ᵀ ∂f/∂θ.
			dst := ag.VJPDest[float64]{Inputs: []*tensor.Tensor[float64]{da}, ParamGrad: !m.redirect}
			if m.redirect {
				dst.Params = []*ag.Param[float64]{m.w, m.b}
				dst.ParamGrads = []*tensor.Tensor[float64]{gw, gb}
			}
			cot := a.Clone().Scale(a, eulerDt)
			m.pb.MustVJP(m.f, []*tensor.Tensor[float64]{hk}, cot, dst)
			m.calls++
			a.Add(a, da)
			if m.redirect {
				sw.Add(sw, gw)
				sb.Add(sb, gb)
			}
		}
		if m.redirect {
			return []*tensor.Tensor[float64]{a, sw, sb}, nil
		}
		return []*tensor.Tensor[float64]{a}, nil
	}, inputs...)
}

// taped records the same two Euler steps with ops, for comparison.
func (m *euler2) taped(tp *ag.Tape[float64], h ag.Var[float64]) ag.Var[float64] {
	for range 2 {
		h = ag.Add(h, ag.Scale(m.f(tp, []ag.Var[float64]{h}), eulerDt))
	}
	return h
}

func TestCustomNodeCallsVJPDuringBackward(t *testing.T) {
	for _, redirect := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(13, 14))
		w0 := ag.NewParam("w0", tensor.RandN[float64](rng, 0, 0.5, 4, 3))
		m := &euler2{
			w:        ag.NewParam("w", tensor.RandN[float64](rng, 0, 0.5, 4, 4)),
			b:        ag.NewParam("b", tensor.RandN[float64](rng, 0, 0.5, 4)),
			pb:       ag.NewPullback(eng64()),
			redirect: redirect,
		}
		x := tensor.RandN[float64](rng, 0, 1, 5, 3)
		target := tensor.RandN[float64](rng, 0, 1, 5, 4)
		ps := []*ag.Param[float64]{w0, m.w, m.b}
		model := func(block func(*ag.Tape[float64], ag.Var[float64]) ag.Var[float64]) func(tp *ag.Tape[float64]) ag.Var[float64] {
			return func(tp *ag.Tape[float64]) ag.Var[float64] {
				h := ag.Linear(tp.Const(x), tp.Param(w0), ag.Var[float64]{})
				// The block's output is used twice, and ops follow it, so the
				// outer Backward runs on after the node.
				y := block(tp, h)
				return ag.Add(ag.MSE(y, tp.Const(target)), ag.Mean(ag.Mul(y, h)))
			}
		}
		rep, err := ag.CheckGradients(model(m.apply), ps, ag.GradCheckOptions{AbsTol: 1e-9})
		if err != nil {
			t.Fatalf("redirect=%v: %v", redirect, err)
		}
		if m.calls != 2 {
			t.Fatalf("redirect=%v: %d VJP calls, want 2", redirect, m.calls)
		}

		// The adjoint node and the taped solve agree to rounding.
		grads := func(f func(tp *ag.Tape[float64]) ag.Var[float64]) []*tensor.Tensor[float64] {
			ag.ZeroGrads(ps)
			tp := ag.NewTape(eng64())
			tp.Backward(f(tp))
			var gs []*tensor.Tensor[float64]
			for _, p := range ps {
				gs = append(gs, p.Grad.Clone())
			}
			return gs
		}
		ga, gt := grads(model(m.apply)), grads(model(m.taped))
		for i := range ga {
			if d, s := maxAbsDiff(ga[i], gt[i]); d > 1e-13*max(1, s) {
				t.Fatalf("redirect=%v: gradient of %s differs from the taped solve by %.3g", redirect, ps[i].Name, d)
			}
		}
		t.Logf("redirect=%v: %v", redirect, rep)
	}
}

func TestVJP(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	w := ag.NewParam("w", tensor.RandN[float64](rng, 0, 1, 3))
	x := tensor.RandN[float64](rng, 0, 1, 3)
	u := tensor.RandN[float64](rng, 0, 1, 3)
	cot := tensor.RandN[float64](rng, 0, 1, 3)
	// f(x, u) = x ⊙ x ⊙ w + u: ∂/∂x = 2 x ⊙ w, ∂/∂u = 1, ∂/∂w = x ⊙ x.
	f := func(tp *ag.Tape[float64], in []ag.Var[float64]) ag.Var[float64] {
		return ag.Add(ag.Mul(ag.Square(in[0]), tp.Param(w)), in[1])
	}
	y, dx, err := ag.VJP(eng64(), f, []*tensor.Tensor[float64]{x, u}, cot)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		xi, wi, ci := x.Data()[i], w.Value.Data()[i], cot.Data()[i]
		check := func(what string, got, want float64) {
			if math.Abs(got-want) > 1e-14 {
				t.Fatalf("%s[%d] = %v, want %v", what, i, got, want)
			}
		}
		check("y", y.Data()[i], xi*xi*wi+u.Data()[i])
		check("dx", dx[0].Data()[i], 2*xi*wi*ci)
		check("du", dx[1].Data()[i], ci)
		check("dw", w.Grad.Data()[i], 0) // VJP leaves Param.Grad alone
	}
	// Asked for, the parameters' gradients go into Param.Grad.
	ag.NewPullback(eng64()).MustVJP(f, []*tensor.Tensor[float64]{x, u}, cot, ag.VJPDest[float64]{ParamGrad: true})
	for i := range 3 {
		xi, ci := x.Data()[i], cot.Data()[i]
		if got, want := w.Grad.Data()[i], xi*xi*ci; math.Abs(got-want) > 1e-14 {
			t.Fatalf("dw[%d] with ParamGrad = %v, want %v", i, got, want)
		}
	}

	// Redirected, set and accumulated; Param.Grad untouched.
	pb := ag.NewPullback(eng64())
	gw := tensor.Full[float64](7, 3)
	dxs := []*tensor.Tensor[float64]{tensor.Full[float64](7, 3), nil}
	before := w.Grad.Clone()
	dst := ag.VJPDest[float64]{Inputs: dxs, Params: []*ag.Param[float64]{w}, ParamGrads: []*tensor.Tensor[float64]{gw}}
	pb.MustVJP(f, []*tensor.Tensor[float64]{x, u}, cot, dst)
	if d, _ := maxAbsDiff(gw, before); d > 1e-14 {
		t.Fatalf("redirected parameter cotangent differs from Param.Grad's by %v", d)
	}
	if d, _ := maxAbsDiff(dxs[0], dx[0]); d > 1e-14 {
		t.Fatalf("input cotangent differs by %v", d)
	}
	if d, _ := maxAbsDiff(w.Grad, before); d != 0 {
		t.Fatal("redirected VJP touched Param.Grad")
	}
	dst.Accumulate = true
	pb.MustVJP(f, []*tensor.Tensor[float64]{x, u}, cot, dst)
	if d, _ := maxAbsDiff(gw, tensor.Scale(before, 2)); d > 1e-14 {
		t.Fatalf("accumulated parameter cotangent is off by %v", d)
	}

	// SkipParams: the same input cotangent, no parameter gradient anywhere;
	// an unlisted parameter still panics.
	gradBefore := w.Grad.Clone()
	dxSkip := []*tensor.Tensor[float64]{tensor.Full[float64](7, 3), nil}
	pb.MustVJP(f, []*tensor.Tensor[float64]{x, u}, cot, ag.VJPDest[float64]{Inputs: dxSkip, Params: []*ag.Param[float64]{w}, SkipParams: true})
	if d, _ := maxAbsDiff(dxSkip[0], dx[0]); d > 1e-14 {
		t.Fatalf("input cotangent with SkipParams differs by %v", d)
	}
	if d, _ := maxAbsDiff(w.Grad, gradBefore); d != 0 {
		t.Fatal("a VJP with SkipParams touched Param.Grad")
	}
	msg := mustPanic(t, func() {
		pb.MustVJP(f, []*tensor.Tensor[float64]{x, u}, cot, ag.VJPDest[float64]{Params: []*ag.Param[float64]{}, SkipParams: true})
	})
	if !strings.Contains(msg, "not listed") {
		t.Fatalf("unlisted parameter with SkipParams: %q", msg)
	}
	// The next VJP on the same Pullback computes the gradients again.
	set := dst
	set.Accumulate = false
	pb.MustVJP(f, []*tensor.Tensor[float64]{x, u}, cot, set)
	if d, _ := maxAbsDiff(gw, before); d > 1e-14 {
		t.Fatalf("parameter cotangent after a SkipParams VJP is off by %v", d)
	}

	// A function that ignores its input has a zero cotangent.
	_, dz, _ := ag.VJP(eng64(), func(tp *ag.Tape[float64], in []ag.Var[float64]) ag.Var[float64] {
		return tp.Const(cot)
	}, []*tensor.Tensor[float64]{x}, cot)
	if dz[0].Norm2() != 0 {
		t.Fatal("cotangent of an unused input is not zero")
	}

	// Unlisted parameters and nested use of one Pullback are refused.
	msg = mustPanic(t, func() {
		pb.MustVJP(f, []*tensor.Tensor[float64]{x, u}, cot, ag.VJPDest[float64]{Params: []*ag.Param[float64]{}})
	})
	if !strings.Contains(msg, `"w"`) || !strings.Contains(msg, "not listed") {
		t.Fatalf("unlisted parameter: %q", msg)
	}
	msg = mustPanic(t, func() {
		pb.MustVJP(func(tp *ag.Tape[float64], in []ag.Var[float64]) ag.Var[float64] {
			pb.MustVJP(f, []*tensor.Tensor[float64]{x, u}, cot, ag.VJPDest[float64]{})
			return in[0]
		}, []*tensor.Tensor[float64]{x}, cot, ag.VJPDest[float64]{})
	})
	if !strings.Contains(msg, "separate Pullback") {
		t.Fatalf("nested Pullback: %q", msg)
	}
	msg = mustPanic(t, func() { pb.MustVJP(f, []*tensor.Tensor[float64]{x, u}, tensor.New[float64](4), ag.VJPDest[float64]{}) })
	if !strings.Contains(msg, "[4]") || !strings.Contains(msg, "[3]") {
		t.Fatalf("bad cotangent shape: %q", msg)
	}

	// Repeated calls at the same shapes allocate nothing.
	dst.Accumulate = false
	args := []*tensor.Tensor[float64]{x, u}
	call := func() { pb.MustVJP(f, args, cot, dst) }
	call()
	if n := testing.AllocsPerRun(20, call); n != 0 {
		t.Fatalf("Pullback.VJP allocates %v times per call", n)
	}
}

var errSolve = errors.New("step size underflow at t = 0.25")

func TestCustomErrorStopsBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	w := ag.NewParam("w", tensor.RandN[float64](rng, 0, 1, 3))
	failing := func(tp *ag.Tape[float64], in ag.Var[float64]) ag.Var[float64] {
		return ag.Custom("solve", in.Value().Clone(), func(gy *tensor.Tensor[float64]) ([]*tensor.Tensor[float64], error) {
			return nil, errSolve
		}, in)
	}
	tp := ag.NewTape(eng64())
	xt := tensor.RandN[float64](rng, 0, 1, 3)
	x := tp.Input(xt)
	h := ag.Mul(x, tp.Param(w))
	err := tp.Backward(ag.Sum(failing(tp, h)))
	if !errors.Is(err, errSolve) || !strings.Contains(err.Error(), "Custom(solve)") {
		t.Fatalf("Backward returned %v, want the node's error naming it", err)
	}
	if x.Grad() != nil || w.Grad.Norm2() != 0 {
		t.Fatal("rules before the failed node ran")
	}
	if ag.GraphRefs(tp) != 0 {
		t.Fatal("the graph was not released after the error")
	}
	// The tape is spent; after Reset it works again.
	tp.Reset()
	x = tp.Input(xt)
	if err := tp.Backward(ag.Sum(ag.Mul(x, tp.Param(w)))); err != nil || x.Grad() == nil {
		t.Fatalf("after Reset: %v", err)
	}

	// The error reaches a Pullback's caller too.
	pb := ag.NewPullback(eng64())
	f := func(tp *ag.Tape[float64], in []ag.Var[float64]) ag.Var[float64] { return failing(tp, in[0]) }
	at := []*tensor.Tensor[float64]{tensor.New[float64](3)}
	if _, err := pb.VJP(f, at, tensor.New[float64](3), ag.VJPDest[float64]{}); !errors.Is(err, errSolve) {
		t.Fatalf("VJP returned %v", err)
	}
	if msg := mustPanic(t, func() { pb.MustVJP(f, at, tensor.New[float64](3), ag.VJPDest[float64]{}) }); !strings.Contains(msg, "underflow") {
		t.Fatalf("VJP panicked with %q", msg)
	}
}

// TestVJPOfRecordedValue: a VJP taken at the value of a Var that a tape
// is recording gradients for returns ErrVJPOfRecorded, and so does that
// tape's Backward, even when the VJP's error is ignored and its result
// enters the pass as a constant (its derivative would be dropped). At a
// copy of the value, on a no-grad tape, or after Backward or Reset, the
// VJP is an ordinary one.
func TestVJPOfRecordedValue(t *testing.T) {
	w := ag.NewParam("w", tensor.FromSlice([]float64{0.5, -1, 2}, 3))
	f := func(tp *ag.Tape[float64], in []ag.Var[float64]) ag.Var[float64] {
		return ag.Tanh(ag.Mul(in[0], tp.Param(w)))
	}
	x := tensor.FromSlice([]float64{0.1, 0.2, 0.3}, 3)
	cot := tensor.Full[float64](1, 3)
	pb := ag.NewPullback(eng64())
	for _, c := range []struct {
		name    string
		at      func(z ag.Var[float64]) *tensor.Tensor[float64]
		noGrad  bool
		wantErr bool
	}{
		{"recorded value", func(z ag.Var[float64]) *tensor.Tensor[float64] { return z.Value() }, false, true},
		{"copy", func(z ag.Var[float64]) *tensor.Tensor[float64] { return z.Value().Clone() }, false, false},
		{"no-grad tape", func(z ag.Var[float64]) *tensor.Tensor[float64] { return z.Value() }, true, false},
	} {
		tp := ag.NewTape(eng64())
		tp.SetNoGrad(c.noGrad)
		z := ag.Scale(tp.Input(x), 2)
		dz := tensor.New[float64](3)
		_, vjpErr := pb.VJP(f, []*tensor.Tensor[float64]{c.at(z)}, cot, ag.VJPDest[float64]{Inputs: []*tensor.Tensor[float64]{dz}})
		if got := errors.Is(vjpErr, ag.ErrVJPOfRecorded); got != c.wantErr {
			t.Errorf("%s: VJP error %v, want ErrVJPOfRecorded: %v", c.name, vjpErr, c.wantErr)
		}
		if c.noGrad {
			continue
		}
		// The result enters the pass as a constant, the error ignored.
		loss := ag.Sum(ag.Mul(z, tp.Const(dz)))
		err := tp.Backward(loss)
		if got := errors.Is(err, ag.ErrVJPOfRecorded); got != c.wantErr {
			t.Errorf("%s: Backward error %v, want ErrVJPOfRecorded: %v", c.name, err, c.wantErr)
		}
		// After Backward the value is no longer recorded.
		if _, err := pb.VJP(f, []*tensor.Tensor[float64]{z.Value()}, cot, ag.VJPDest[float64]{}); err != nil {
			t.Errorf("%s: VJP after Backward: %v", c.name, err)
		}
		// Nor is it on a tape in no-grad mode.
		v := z.Value()
		tp.Reset()
		tp.SetNoGrad(true)
		if _, err := pb.VJP(f, []*tensor.Tensor[float64]{v}, cot, ag.VJPDest[float64]{}); err != nil {
			t.Errorf("%s: VJP while its tape records no gradients: %v", c.name, err)
		}
	}
	if w.Grad.Norm2() != 0 {
		t.Errorf("a VJP without parameter destinations wrote Param.Grad: %v", w.Grad.Data())
	}
	// A constant's value, even on a recording tape, has no derivative to
	// drop: a VJP at it is an ordinary one, and so is the pass.
	tp := ag.NewTape(eng64())
	c := tp.Const(x.Clone())
	z := ag.Mul(tp.Input(x), c)
	if _, err := pb.VJP(f, []*tensor.Tensor[float64]{c.Value()}, cot, ag.VJPDest[float64]{}); err != nil {
		t.Errorf("VJP at a constant's value on a recording tape: %v", err)
	}
	if err := tp.Backward(ag.Sum(z)); err != nil {
		t.Errorf("Backward after a VJP at a constant's value: %v", err)
	}
	// A poisoned pass is spent: the tape must be Reset before recording again.
	tp.Reset()
	z = ag.Scale(tp.Input(x), 2)
	pb.VJP(f, []*tensor.Tensor[float64]{z.Value()}, cot, ag.VJPDest[float64]{})
	if err := tp.Backward(ag.Sum(z)); !errors.Is(err, ag.ErrVJPOfRecorded) {
		t.Fatalf("poisoned Backward: %v", err)
	}
	if msg := mustPanic(t, func() { ag.Scale(z, 2) }); !strings.Contains(msg, "already ran Backward") {
		t.Errorf("recording after a poisoned Backward: %q", msg)
	}
}
