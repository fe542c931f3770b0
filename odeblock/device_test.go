package odeblock_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/tensor/enginetest"
)

// seesDevice is a field that notes whether it was ever handed a state
// whose newer values are on a device: a forward solve running there.
type seesDevice struct {
	odeblock.Field[float64]
	seen *bool
}

func (f seesDevice) ForwardT(tp *autograd.Tape[float64], t float64, h autograd.Var[float64]) autograd.Var[float64] {
	if h.Value().Storage().DeviceNewer() {
		*f.seen = true
	}
	return f.Field.ForwardT(tp, t, h)
}

// TestBlockOnDevice: on a device engine (the parking fake, whose host
// memory holds NaN wherever the device holds newer values), every family
// in every gradient mode gives the CPU engine's trajectory and gradients;
// in the Adjoint mode and without gradients the forward solve runs on the
// device (NODE's field is handed the solver's device buffers), in the
// others and in Interpolated on the host; the Adjoint mode's backward solve
// runs there too (every family's field but SONODE's, whose input the host
// joins, is handed device values).
func TestBlockOnDevice(t *testing.T) {
	cpu := tensor.EngineFor[float64](tensor.Gonum(1))
	dev := enginetest.NewParkingDevice(cpu)
	for _, mode := range modes {
		for fi := range families(1) {
			run := func(e tensor.Engine[float64], noGrad bool) (traj []float64, grads []float64, fwdOnDev, bwdOnDev bool) {
				var onDev bool
				f := familiesOf(1, batch, func(f odeblock.Field[float64]) odeblock.Field[float64] {
					return seesDevice{f, &onDev}
				})[fi]
				b := &odeblock.Block[float64]{Dynamics: f.dyn, Times: []float64{0, 0.3, 0.8}, Mode: mode,
					Solver: odeblock.Options{RTol: 1e-9, ATol: 1e-9}}
				tp := autograd.NewTape(e)
				if noGrad {
					tp.SetNoGrad(true)
				}
				z, err := b.Trajectory(tp, f.state(tp))
				if err != nil {
					t.Fatal(err)
				}
				traj = append(traj, z.Value().ReadData()...)
				fwdOnDev, onDev = onDev, false
				if noGrad {
					return traj, nil, fwdOnDev, false
				}
				for _, p := range f.params() {
					p.ZeroGrad()
				}
				if err := tp.Backward(autograd.Mean(autograd.Square(z))); err != nil {
					t.Fatal(err)
				}
				for _, p := range f.params() {
					grads = append(grads, p.Grad.ReadData()...)
				}
				return traj, grads, fwdOnDev, onDev
			}
			name := families(1)[fi].name
			for _, noGrad := range []bool{false, true} {
				if noGrad && mode != (odeblock.Adjoint{}) {
					continue
				}
				t.Run(fmt.Sprintf("%v/%s/nograd=%v", mode, name, noGrad), func(t *testing.T) {
					wantTraj, wantGrads, _, _ := run(cpu, noGrad)
					gotTraj, gotGrads, fwdOnDev, bwdOnDev := run(dev, noGrad)
					approx := cmpopts.EquateApprox(1e-9, 1e-12)
					if diff := cmp.Diff(wantTraj, gotTraj, approx); diff != "" {
						t.Errorf("trajectory (-cpu +device):\n%s", diff)
					}
					if diff := cmp.Diff(wantGrads, gotGrads, approx); diff != "" {
						t.Errorf("gradients (-cpu +device):\n%s", diff)
					}
					adjoint := mode == (odeblock.Adjoint{})
					if name == "node" && fwdOnDev != adjoint {
						t.Errorf("the forward solve on the device: %v, want %v", fwdOnDev, adjoint)
					}
					// SONODE's field is handed [h, u] joined on the host.
					if adjoint && !noGrad && name != "sonode" && !bwdOnDev {
						t.Error("the backward solve did not run on the device")
					}
				})
			}
		}
	}
}

// TestAdjointDriftOnDevice: TestAdjointDrift's HBNODE over [0, 40], with
// the backward solve on the device (the parking fake): under FailOnDrift
// the drift is an error; by default the adjoint recovers (re-solving the
// forward on the host from the device's output rows) with the CPU's
// gradient; with the check off it runs to the end.
func TestAdjointDriftOnDevice(t *testing.T) {
	solver := odeblock.Options{RTol: 1e-6, ATol: 1e-6}
	times := []float64{0, 40}
	f := dissipativeHBNODE()
	grads := func(e tensor.Engine[float64], mode odeblock.Adjoint) ([]float64, odeblock.BlockStats, error) {
		b := &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: mode}
		tp := autograd.NewTape(e)
		z, err := b.Forward(tp, f.state(tp))
		if err != nil {
			t.Fatal(err)
		}
		autograd.ZeroGrads(f.params())
		if err := tp.Backward(autograd.Sum(autograd.Square(odeblock.Part(z, 0, 2)))); err != nil {
			return nil, b.Stats(), err
		}
		var g []float64
		for _, p := range f.params() {
			g = append(g, p.Grad.ReadData()...)
		}
		return g, b.Stats(), nil
	}
	dev := enginetest.NewParkingDevice(tensor.EngineFor[float64](tensor.Gonum(1)))
	if _, _, err := grads(dev, odeblock.Adjoint{FailOnDrift: true}); !errors.Is(err, odeblock.ErrAdjointDrift) {
		t.Errorf("FailOnDrift on the device: got %v, want ErrAdjointDrift", err)
	}
	want, wantSt, err := grads(tensor.EngineFor[float64](tensor.Gonum(1)), odeblock.Adjoint{})
	if err != nil {
		t.Fatal(err)
	}
	got, st, err := grads(dev, odeblock.Adjoint{})
	if err != nil {
		t.Fatalf("recovering adjoint on the device: %v", err)
	}
	t.Logf("backward NFE: %d on the CPU, %d on the device", wantSt.Backward.NFE, st.Backward.NFE)
	// The guard stops a diverging piece early, as on the CPU: without it
	// the piece would run on to its end before the drift check.
	if st.Backward.NFE > wantSt.Backward.NFE*11/10 {
		t.Errorf("backward NFE %d on the device, %d on the CPU: the diverging piece was not stopped early", st.Backward.NFE, wantSt.Backward.NFE)
	}
	if st.Recovered == 0 {
		t.Error("no stretch recovered on the device")
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(1e-6, 1e-9)); diff != "" {
		t.Errorf("recovered gradients (-cpu +device):\n%s", diff)
	}
	if _, _, err := grads(dev, odeblock.Adjoint{MaxDrift: -1}); err != nil {
		t.Errorf("the check off on the device: %v", err)
	}
}
