package odeblock_test

import (
	"math"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// TestInterpolatedModes: on every family the interpolating adjoint agrees
// with Backprop to the tolerance, with outputs inside steps and at them,
// for an FSAL method with its own interpolant (dopri5), one with Hermite
// (bosh3) and dop853 (dense-output stages).
func TestInterpolatedModes(t *testing.T) {
	for _, method := range []string{"dopri5", "bosh3", "dop853"} {
		for _, f := range families(2) {
			times := []float64{0, 0.3, 0.5, 1}
			solver := odeblock.Options{Method: method, RTol: 1e-10, ATol: 1e-10}
			bp, _ := gradients(t, f, &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: odeblock.Backprop{}})
			ip, st := gradients(t, f, &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: odeblock.Interpolated{}})
			if d := maxRelDiff(ip, bp); d > 1e-7 {
				t.Errorf("%s, %s: interpolated vs backprop: relative difference %.3g", method, f.name, d)
			}
			if st.Stored != st.Forward.Accepted || st.Backward.NFE == 0 {
				t.Errorf("%s, %s: %d steps kept of %d accepted; backward NFE %d", method, f.name, st.Stored, st.Forward.Accepted, st.Backward.NFE)
			}
		}
	}
}

// TestInterpolatedDissipative: issue 12's HBNODE over [0, 40], whose
// backward reconstruction drifts (the Adjoint mode has to recover it), and
// the AdamNODE over [0, 16], whose reconstruction fails: the interpolating
// adjoint, which reconstructs nothing, gives Checkpoint's gradients at a
// tight tolerance to within Checkpoint's own error at the working one.
func TestInterpolatedDissipative(t *testing.T) {
	for _, c := range []struct {
		f     family
		times []float64
	}{{dissipativeHBNODE(), []float64{0, 40}}, {longHorizonAdam(), []float64{0, 16}}} {
		solver := odeblock.Options{RTol: 1e-6, ATol: 1e-6}
		ref, _ := gradients(t, c.f, &odeblock.Block[float64]{Dynamics: c.f.dyn, Times: c.times, Solver: odeblock.Options{RTol: 1e-10, ATol: 1e-10}, Mode: odeblock.Checkpoint{}})
		ck, _ := gradients(t, c.f, &odeblock.Block[float64]{Dynamics: c.f.dyn, Times: c.times, Solver: solver, Mode: odeblock.Checkpoint{}})
		ip, st := gradients(t, c.f, &odeblock.Block[float64]{Dynamics: c.f.dyn, Times: c.times, Solver: solver, Mode: odeblock.Interpolated{}})
		d, dck := maxRelDiff(ip, ref), maxRelDiff(ck, ref)
		if d > math.Max(2*dck, 1e-5) {
			t.Errorf("%s over %v: interpolated vs checkpoint at 1e-10: %.3g; checkpoint at 1e-6: %.3g", c.f.name, c.times, d, dck)
		}
		t.Logf("%s over %v: interpolated %.3g, checkpoint %.3g off; forward NFE %d, backward NFE %d, %d steps kept", c.f.name, c.times, d, dck, st.Forward.NFE, st.Backward.NFE, st.Stored)
	}
}

// TestInterpolatedStiff: on the stiff linear field with λ = −1000, where
// the Adjoint mode's reverse-time reconstruction explodes for rodas4 and
// bdf, the interpolating adjoint's gradients match central differences for
// every stiff method; and the Backprop and Checkpoint modes, which use it
// for these methods, give the same numbers; Recursive, which runs as
// Interpolated with its Budget, the same to the tolerance.
func TestInterpolatedStiff(t *testing.T) {
	for _, method := range []string{"rosenbrock23", "rodas4", "bdf"} {
		w := autograd.NewParam("w", tensor.FromSlice([]float64{-1000, 1, 0.5, -1}, 2, 2))
		x := autograd.NewParam("x", tensor.FromSlice([]float64{1, 2}, 1, 2))
		field := odeblock.FieldFunc([]*autograd.Param[float64]{w}, func(tp *autograd.Tape[float64], _ float64, z autograd.Var[float64]) autograd.Var[float64] {
			return autograd.Linear(z, tp.Param(w), autograd.Var[float64]{})
		})
		solver := odeblock.Options{Method: method, RTol: 1e-9, ATol: 1e-9, StepControl: odeblock.StepControl{MaxSteps: 100000}}
		grads := map[string][]float64{}
		for _, mode := range []odeblock.GradMode{odeblock.Interpolated{}, odeblock.Backprop{}, odeblock.Checkpoint{}} {
			b := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Times: []float64{0, 0.5, 2}, Solver: solver, Mode: mode}
			loss := func(tp *autograd.Tape[float64]) (autograd.Var[float64], error) {
				return b.Trajectory(tp, tp.Param(x))
			}
			opt := autograd.GradCheckOptions{Step: 1e-6, AbsTol: 1e-5, RelTol: 1e-4}
			if rep, err := autograd.CheckGradients(loss, []*autograd.Param[float64]{w, x}, opt); err != nil {
				t.Fatalf("%s, %v: %v\n%v", method, mode, err, rep)
			}
			autograd.ZeroGrads([]*autograd.Param[float64]{w, x})
			tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
			z, err := loss(tp)
			if err != nil {
				t.Fatal(err)
			}
			if err := tp.Backward(autograd.Sum(z)); err != nil {
				t.Fatalf("%s, %v: %v", method, mode, err)
			}
			grads[mode.String()] = append(append([]float64(nil), w.Grad.Data()...), x.Grad.Data()...)
		}
		for _, m := range []string{"backprop", "checkpoint"} {
			if d := maxRelDiff(grads[m], grads["interpolated"]); d != 0 {
				t.Errorf("%s: %s differs from interpolated by %.3g: it should use it", method, m, d)
			}
		}
		b := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Times: []float64{0, 0.5, 2}, Solver: solver, Mode: odeblock.Recursive{Budget: 4}}
		autograd.ZeroGrads([]*autograd.Param[float64]{w, x})
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
		z, err := b.Trajectory(tp, tp.Param(x))
		if err == nil {
			err = tp.Backward(autograd.Sum(z))
		}
		if err != nil {
			t.Fatalf("%s, recursive: %v", method, err)
		}
		rc := append(append([]float64(nil), w.Grad.Data()...), x.Grad.Data()...)
		if d := maxRelDiff(rc, grads["interpolated"]); d > 1e-6 {
			t.Errorf("%s: Recursive{Budget: 4} differs from Interpolated by %.3g", method, d)
		}
	}
}

// TestInterpolatedEveryMethod: with every method (the fixed-step ones at
// a fixed Step) the interpolating adjoint's gradients of a small
// nonlinear block match central differences to the accuracy of the
// method and of its dense output.
func TestInterpolatedEveryMethod(t *testing.T) {
	for _, name := range odeblock.MethodNames() {
		tb, _ := odeblock.Method(name)
		solver := odeblock.Options{Method: name, RTol: 1e-10, ATol: 1e-10, MaxOrder: 5}
		tol := 1e-6
		switch {
		case !tb.Adaptive():
			solver.Step, tol = 1.0/512, 1e-3
		case tb.Order <= 2:
			solver.RTol, solver.ATol, tol = 1e-8, 1e-8, 1e-4
		case name == "dopri8":
			// Its quartic dense output is far less accurate than its
			// steps (1e-5 at 1e-8), and the backward solve reads the
			// state from it: dop853 is the one to use.
			tol = 1e-2
		}
		w := autograd.NewParam("w", tensor.FromSlice([]float64{-0.5, 0.3, -0.2, -0.4}, 2, 2))
		x := autograd.NewParam("x", tensor.FromSlice([]float64{1, -0.5}, 1, 2))
		field := odeblock.FieldFunc([]*autograd.Param[float64]{w}, func(tp *autograd.Tape[float64], _ float64, z autograd.Var[float64]) autograd.Var[float64] {
			return autograd.Tanh(autograd.MatMul(z, tp.Param(w)))
		})
		b := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Times: []float64{0, 0.7, 1.5}, Solver: solver, Mode: odeblock.Interpolated{}}
		loss := func(tp *autograd.Tape[float64]) (autograd.Var[float64], error) {
			return b.Trajectory(tp, tp.Param(x))
		}
		opt := autograd.GradCheckOptions{Step: 1e-5, AbsTol: tol, RelTol: tol}
		if rep, err := autograd.CheckGradients(loss, []*autograd.Param[float64]{w, x}, opt); err != nil {
			t.Errorf("%s: %v\n%v", name, err, rep)
		}
	}
}

// TestInterpolatedReverseTime: with Times decreasing (the solve runs
// backward in time), the interpolating adjoint with an explicit, a
// Rosenbrock and the BDF method gives Backprop's gradients (dopri5 at
// 1e-10) to the tolerance.
func TestInterpolatedReverseTime(t *testing.T) {
	for _, f := range families(2)[:3] {
		times := []float64{1, 0.6, 0}
		ref, _ := gradients(t, f, &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: odeblock.Options{RTol: 1e-10, ATol: 1e-10}, Mode: odeblock.Backprop{}})
		for _, method := range []string{"dopri5", "rodas4", "bdf"} {
			solver := odeblock.Options{Method: method, RTol: 1e-10, ATol: 1e-10}
			ip, _ := gradients(t, f, &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: odeblock.Interpolated{}})
			if d := maxRelDiff(ip, ref); d > 1e-7 {
				t.Errorf("%s, %s: interpolated over decreasing times vs backprop: relative difference %.3g", f.name, method, d)
			}
		}
	}
}

// TestInterpolatedBudget: with a Budget the interpolating adjoint keeps at
// most that many states (and one stretch's steps) and re-solves each
// stretch between them: on every family, and with rodas4 and bdf, it gives
// the gradients of the unbudgeted mode to the tolerance of the re-solves.
func TestInterpolatedBudget(t *testing.T) {
	for _, method := range []string{"dopri5", "rodas4", "bdf"} {
		for _, f := range families(2) {
			times := []float64{0, 0.6, 3}
			solver := odeblock.Options{Method: method, RTol: 1e-10, ATol: 1e-10}
			ip, full := gradients(t, f, &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: odeblock.Interpolated{}})
			for _, budget := range []int{1, 4} {
				bg, st := gradients(t, f, &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: odeblock.Interpolated{Budget: budget}})
				if d := maxRelDiff(bg, ip); d > 1e-6 {
					t.Errorf("%s, %s, budget %d: differs from the unbudgeted mode by %.3g", method, f.name, budget, d)
				}
				if st.Stored >= full.Stored || st.Backward.NFE <= full.Backward.NFE {
					t.Errorf("%s, %s, budget %d: %d states kept, backward NFE %d; unbudgeted %d, %d", method, f.name, budget, st.Stored, st.Backward.NFE, full.Stored, full.Backward.NFE)
				}
			}
		}
	}
}
