package odeblock_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// insideTimes are 61 output times on [0, 1], six in each step of 0.1.
var insideTimes = func() []float64 {
	ts := make([]float64, 61)
	for i := range ts {
		ts[i] = float64(i) / 60
	}
	return ts
}()

// TestOutputsInsideSteps: with a method whose dense output is a linear map
// of a step's start, end and stages (dopri5's quartic, tsit5's, bosh3's
// Hermite with FSAL), Backprop, Checkpoint and Recursive take
// output times inside steps from the dense output, as torchdiffeq's odeint
// does, instead of ending a step on each: the same steps as the adjoint,
// the same values, and the gradient of that map, checked against central
// differences and across the three modes.
func TestOutputsInsideSteps(t *testing.T) {
	fams := families(4)
	for _, method := range []string{"dopri5", "tsit5", "bosh3"} {
		for _, f := range []family{fams[0], fams[5]} { // node, adamnode
			t.Run(method+"/"+f.name, func(t *testing.T) {
				// Adaptive steps that never shrink nor grow past 0.1: the
				// steps of a fixed grid (which would land on every output
				// time), so that central differences see the discrete map.
				solver := odeblock.Options{Method: method, RTol: 1, ATol: 1, StepControl: odeblock.StepControl{FirstStep: 0.1, MaxStep: 0.1}}
				values := func(mode odeblock.GradMode) ([]float64, odeblock.BlockStats) {
					b := &odeblock.Block[float64]{Dynamics: f.dyn, Times: insideTimes, Solver: solver, Mode: mode}
					tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
					z, err := b.Trajectory(tp, f.state(tp))
					if err != nil {
						t.Fatal(err)
					}
					return append([]float64(nil), z.Value().Data()...), b.Stats()
				}
				adj, adjStats := values(odeblock.Adjoint{})
				var grads [][]float64
				for _, mode := range []odeblock.GradMode{odeblock.Backprop{}, odeblock.Checkpoint{}, odeblock.Recursive{Budget: 2}} {
					got, st := values(mode)
					if st.Forward.Accepted != 10 || st.Forward.NFE != adjStats.Forward.NFE {
						t.Errorf("%v: %d steps, NFE %d; want 10 and the adjoint's NFE %d", mode, st.Forward.Accepted, st.Forward.NFE, adjStats.Forward.NFE)
					}
					if d := maxRelDiff(got, adj); d > 1e-14 {
						t.Errorf("%v: values differ from the adjoint's dense output by %.3g", mode, d)
					}
					b := &odeblock.Block[float64]{Dynamics: f.dyn, Times: insideTimes, Solver: solver, Mode: mode}
					g, _ := gradients(t, f, b)
					grads = append(grads, g)
					if mode != (odeblock.Backprop{}) {
						continue
					}
					rep, err := autograd.CheckGradients(blockFunc(t, f, b), f.params(), autograd.GradCheckOptions{Step: 1e-6, AbsTol: 1e-7, RelTol: 1e-5})
					if err != nil {
						t.Errorf("%v\n%v", err, rep)
					}
				}
				for i, g := range grads[1:] {
					if d := maxRelDiff(g, grads[0]); d > 1e-12 {
						t.Errorf("mode %d against Backprop: relative difference %.3g", i+1, d)
					}
				}
			})
		}
	}
}

// TestOutputsInsideAdaptive: on an adaptive dopri5 solve with many output
// times, Backprop takes the adjoint's steps (no step ends on the outputs)
// and its gradient matches central differences; a method without such a
// dense output (fehlberg2: f at the step's end is no stage; dopri8, whose
// interpolant is of far lower order) and fixed steps (rk4) still end a
// step on every output.
func TestOutputsInsideAdaptive(t *testing.T) {
	f := families(5)[3] // hbnode
	times := make([]float64, 41)
	for i := range times {
		times[i] = float64(i) / 40
	}
	for _, c := range []struct {
		solver odeblock.Options
		inside bool
	}{
		{odeblock.Options{RTol: 1e-7, ATol: 1e-7}, true},
		{odeblock.Options{Method: "fehlberg2", RTol: 1e-4, ATol: 1e-4}, false},
		{odeblock.Options{Method: "dopri8", RTol: 1e-6, ATol: 1e-6}, false},
		{odeblock.Options{Method: "rk4", Step: 0.3}, false},
	} {
		t.Run(fmt.Sprint(c.solver.Method), func(t *testing.T) {
			stats := func(mode odeblock.GradMode) odeblock.BlockStats {
				b := &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: c.solver, Mode: mode}
				tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
				if _, err := b.Trajectory(tp, f.state(tp)); err != nil {
					t.Fatal(err)
				}
				return b.Stats()
			}
			bp, adj := stats(odeblock.Backprop{}), stats(odeblock.Adjoint{})
			if c.inside && bp.Forward.Accepted != adj.Forward.Accepted {
				t.Errorf("Backprop took %d steps, the adjoint %d: want the same", bp.Forward.Accepted, adj.Forward.Accepted)
			}
			if !c.inside && bp.Forward.Accepted < len(times)-1 {
				t.Errorf("Backprop took %d steps for %d output times: want a step end on each", bp.Forward.Accepted, len(times)-1)
			}
			if !c.inside {
				return
			}
			b := &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: c.solver, Mode: odeblock.Backprop{}}
			// Central differences of an adaptive solve see its step sizes
			// move; at this tolerance they move too little to matter.
			rep, err := autograd.CheckGradients(blockFunc(t, f, b), f.params(), autograd.GradCheckOptions{Step: 1e-6, AbsTol: 1e-6, RelTol: 1e-4})
			if err != nil {
				t.Errorf("%v\n%v", err, rep)
			}
		})
	}
}

// TestOutputsInsideGradOfGrad: second derivatives through a Backprop block
// whose outputs lie inside steps (the replay records the dense output as
// ops) match central differences of the first.
func TestOutputsInsideGradOfGrad(t *testing.T) {
	f := families(6)[0] // node
	b := &odeblock.Block[float64]{Dynamics: f.dyn, Times: insideTimes, Solver: odeblock.Options{RTol: 1, ATol: 1, StepControl: odeblock.StepControl{FirstStep: 0.1, MaxStep: 0.1}}, Mode: odeblock.Backprop{}}
	x := f.inputs[0]
	penalty := func(tp *autograd.Tape[float64]) (autograd.Var[float64], error) {
		xv := tp.Param(x)
		z, err := b.Trajectory(tp, xv)
		if err != nil {
			return z, err
		}
		gs, err := autograd.Grad([]autograd.Var[float64]{autograd.Sum(autograd.Square(z))}, []autograd.Var[float64]{xv}, autograd.GradOptions[float64]{CreateGraph: true})
		if err != nil {
			return autograd.Var[float64]{}, err
		}
		return autograd.Sum(autograd.Square(gs.Inputs[0])), nil
	}
	if _, err := autograd.CheckHigherOrder(penalty, f.dyn.Params(), 2, autograd.GradCheckOptions{AbsTol: 1e-6, RelTol: 1e-5}); err != nil {
		t.Error(err)
	}
}

// TestOutputsInsideJumps: at a jump (Options.Jumps) the step after it
// evaluates f afresh instead of reusing the FSAL stage (f's left limit
// there is not its right limit), so outputs inside the step before it pull
// back through that step's own last stage: with a field that switches on
// at a jump, Backprop's gradients (shared FSAL tapes between jumps) equal
// Checkpoint's (recomputed steps) and central differences.
func TestOutputsInsideJumps(t *testing.T) {
	w := autograd.NewParam("w", tensor.FromSlice([]float64{-0.5, 1, -1, -0.3}, 2, 2))
	v := autograd.NewParam("v", tensor.FromSlice([]float64{0.4, -0.2, 0.7, 0.1}, 2, 2))
	z0 := autograd.NewParam("z0", tensor.FromSlice([]float64{1, 0.5, -0.3, 0.8}, 2, 2))
	field := odeblock.FieldFunc([]*autograd.Param[float64]{w, v}, func(tp *autograd.Tape[float64], tt float64, z autograd.Var[float64]) autograd.Var[float64] {
		y := autograd.Linear(z, tp.Param(w), autograd.Var[float64]{})
		if tt >= 0.35 {
			y = autograd.Add(y, autograd.Tanh(autograd.Linear(z, tp.Param(v), autograd.Var[float64]{})))
		}
		return y
	})
	solver := odeblock.Options{RTol: 1, ATol: 1, StepControl: odeblock.StepControl{FirstStep: 0.1, MaxStep: 0.1}, Stops: odeblock.Stops{Jumps: []float64{0.35}}}
	block := func(mode odeblock.GradMode) func(tp *autograd.Tape[float64]) autograd.Var[float64] {
		b := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Times: insideTimes, Solver: solver, Mode: mode}
		return func(tp *autograd.Tape[float64]) autograd.Var[float64] {
			z, err := b.Trajectory(tp, tp.Param(z0))
			if err != nil {
				t.Fatal(err)
			}
			return z
		}
	}
	params := []*autograd.Param[float64]{w, v, z0}
	grads := func(mode odeblock.GradMode) []float64 {
		autograd.ZeroGrads(params)
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
		z := block(mode)(tp)
		if err := tp.Backward(autograd.Sum(autograd.Square(z))); err != nil {
			t.Fatal(err)
		}
		var g []float64
		for _, p := range params {
			g = append(g, p.Grad.Data()...)
		}
		return g
	}
	if d := maxRelDiff(grads(odeblock.Checkpoint{}), grads(odeblock.Backprop{})); d > 1e-12 {
		t.Errorf("Checkpoint against Backprop: relative difference %.3g", d)
	}
	rep, err := autograd.CheckGradients(block(odeblock.Backprop{}), params, autograd.GradCheckOptions{Step: 1e-6, AbsTol: 1e-7, RelTol: 1e-5})
	if err != nil {
		t.Errorf("%v\n%v", err, rep)
	}
}

// TestOutputsInsideBackwards: a trajectory backwards in time (decreasing
// Times) takes its outputs inside steps too: the adjoint's steps and
// values, Checkpoint's gradients, central differences.
func TestOutputsInsideBackwards(t *testing.T) {
	f := families(8)[0] // node
	times := slices.Clone(insideTimes)
	slices.Reverse(times)
	solver := odeblock.Options{RTol: 1, ATol: 1, StepControl: odeblock.StepControl{FirstStep: 0.1, MaxStep: 0.1}}
	values := func(mode odeblock.GradMode) ([]float64, odeblock.BlockStats) {
		b := &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: mode}
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
		z, err := b.Trajectory(tp, f.state(tp))
		if err != nil {
			t.Fatal(err)
		}
		return z.Value().Data(), b.Stats()
	}
	adj, as := values(odeblock.Adjoint{})
	bpv, bs := values(odeblock.Backprop{})
	if bs.Forward.Accepted != 10 || as.Forward.Accepted != 10 || maxRelDiff(bpv, adj) > 1e-14 {
		t.Fatalf("Backprop took %d steps (the adjoint %d), values %.3g from the adjoint's; want 10, equal", bs.Forward.Accepted, as.Forward.Accepted, maxRelDiff(bpv, adj))
	}
	bp := &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: odeblock.Backprop{}}
	gb, _ := gradients(t, f, bp)
	gc, _ := gradients(t, f, &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: odeblock.Checkpoint{}})
	if d := maxRelDiff(gc, gb); d > 1e-12 {
		t.Errorf("Checkpoint against Backprop: relative difference %.3g", d)
	}
	rep, err := autograd.CheckGradients(blockFunc(t, f, bp), f.params(), autograd.GradCheckOptions{Step: 1e-6, AbsTol: 1e-7, RelTol: 1e-5})
	if err != nil {
		t.Errorf("%v\n%v", err, rep)
	}
}
