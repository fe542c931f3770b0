package odeblock_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/tensor/enginetest"
)

// plainEngine is a third party's engine: a CPU engine behind a type of its
// own that has no Elementwise (tensor.ElementwiseOf is nil) and is no
// device.
type plainEngine struct{ tensor.Engine[float64] }

// TestBlockOnPlainEngine: on an engine without an Elementwise, every family
// in every gradient mode, with outputs at step ends (rk4's fixed steps)
// and inside steps (dopri5's dense output), gives the CPU engine's
// trajectory and gradients to the bit: the block's arithmetic falls back to
// tensor.HostElementwise, the CPU's own on the calling goroutine.
func TestBlockOnPlainEngine(t *testing.T) {
	cpu := tensor.EngineFor[float64](tensor.Gonum(1))
	plain := plainEngine{cpu}
	if tensor.ElementwiseOf[float64](plain) != nil || tensor.OnDevice[float64](plain) {
		t.Fatal("the test engine has an Elementwise or is a device")
	}
	for _, mode := range modes {
		for _, opt := range []odeblock.Options{{Method: "rk4", Step: 0.1}, {RTol: 1e-7, ATol: 1e-7}} {
			for fi, fam := range families(3) {
				t.Run(fmt.Sprintf("%v/%s/%s", mode, opt.Method, fam.name), func(t *testing.T) {
					run := func(e tensor.Engine[float64]) (traj, grads []float64) {
						f := families(3)[fi]
						b := &odeblock.Block[float64]{Dynamics: f.dyn, Times: []float64{0, 0.35, 0.8}, Mode: mode, Solver: opt}
						for range 2 { // the second pass on the first's pooled buffers
							tp := autograd.NewTape(e)
							for _, p := range f.params() {
								p.ZeroGrad()
							}
							z, err := b.Trajectory(tp, f.state(tp))
							if err != nil {
								t.Fatal(err)
							}
							if err := tp.Backward(autograd.Mean(autograd.Square(z))); err != nil {
								t.Fatal(err)
							}
							traj = append(traj, z.Value().ReadData()...)
							for _, p := range f.params() {
								grads = append(grads, p.Grad.ReadData()...)
							}
						}
						return traj, grads
					}
					wantTraj, wantGrads := run(cpu)
					gotTraj, gotGrads := run(plain)
					if diff := cmp.Diff(wantTraj, gotTraj); diff != "" {
						t.Errorf("trajectory (-cpu +plain):\n%s", diff)
					}
					if diff := cmp.Diff(wantGrads, gotGrads); diff != "" {
						t.Errorf("gradients (-cpu +plain):\n%s", diff)
					}
				})
			}
		}
	}
}

// TestDynamicsWrongShape: dynamics whose value has another number of
// elements than the state fail the forward pass with an error naming both
// shapes, in the evaluation without gradients (the Adjoint and Checkpoint
// modes, a tape without gradients) and in Backprop's recorded one, on the
// CPU engine and on a device.
func TestDynamicsWrongShape(t *testing.T) {
	w := autograd.NewParam("w", tensor.FromSlice([]float64{0.5, -0.2, 0.1}, 3))
	field := odeblock.FieldFunc([]*autograd.Param[float64]{w}, func(tp *autograd.Tape[float64], _ float64, h autograd.Var[float64]) autograd.Var[float64] {
		return autograd.SumAxis(autograd.Mul(h, tp.Param(w)), 1, false) // [2], for a state of [2, 3]
	})
	cpu := tensor.EngineFor[float64](tensor.Gonum(1))
	for _, eng := range []tensor.Engine[float64]{cpu, enginetest.NewParkingDevice(cpu)} {
		for _, mode := range []odeblock.GradMode{odeblock.Adjoint{}, odeblock.Backprop{}, odeblock.Checkpoint{}} {
			for _, noGrad := range []bool{false, true} {
				b := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Mode: mode}
				tp := autograd.NewTape(eng)
				tp.SetNoGrad(noGrad)
				_, err := b.Forward(tp, tp.Const(tensor.FromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3)))
				if err == nil || !strings.Contains(err.Error(), "dynamics returned shape [2] for a state of shape [2 3]") {
					t.Errorf("device %v, %v, no grad %v: error %v, want one naming both shapes", tensor.OnDevice(eng), mode, noGrad, err)
				}
			}
		}
	}
}
