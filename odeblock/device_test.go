package odeblock_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
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
// in every mode but Interpolated with a Budget, and without gradients, the
// forward solve runs on the device (NODE's field is handed the solver's
// device buffers), in that one on the host; the Adjoint and Interpolated
// modes' backward solve runs there too (every family's field but SONODE's,
// whose input the host joins, is handed device values).
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
					// Interpolated with a Budget keeps its states, and re-solves
					// its stretches, on the host.
					im, interpolated := mode.(odeblock.Interpolated)
					budget := interpolated && im.Budget > 0
					adjoint := mode == (odeblock.Adjoint{}) || interpolated && !budget
					if name == "node" && fwdOnDev == budget {
						t.Errorf("the forward solve on the device: %v, want %v", fwdOnDev, !budget)
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

// ewFamily is a family whose field is elementwise only, f(t, h) =
// w ⊙ tanh(h) + t·b (its ops all the engine's Elementwise), so that a
// device engine (the parking fake, whose GEMM is the host's) computes all
// of it in its memory.
func ewFamily(name string, seed uint64) family {
	rng := rand.New(rand.NewPCG(seed, 9))
	x := autograd.NewParam("x", tensor.RandN[float64](rng, 0, 1, batch, width))
	m0 := autograd.NewParam("m0", tensor.RandN[float64](rng, 0, 0.5, batch, width))
	w := autograd.NewParam("w", tensor.RandN[float64](rng, 0, 0.7, width))
	bias := autograd.NewParam("b", tensor.RandN[float64](rng, 0, 0.7, width))
	field := odeblock.FieldFunc([]*autograd.Param[float64]{w, bias}, func(tp *autograd.Tape[float64], t float64, h autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Add(autograd.Mul(autograd.Tanh(h), tp.Param(w)), autograd.Scale(tp.Param(bias), t))
	})
	f := family{name: name, inputs: []*autograd.Param[float64]{x, m0}}
	switch name {
	case "node":
		f.dyn = &odeblock.NODE[float64]{F: field}
		f.inputs = f.inputs[:1]
		f.state = func(tp *autograd.Tape[float64]) autograd.Var[float64] { return tp.Param(x) }
	case "hbnode", "ghbnode":
		f.dyn = odeblock.NewHBNODE[float64](field, -1)
		if name == "ghbnode" {
			f.dyn = odeblock.NewGHBNODE[float64](field, -1, 0.5)
		}
		f.state = func(tp *autograd.Tape[float64]) autograd.Var[float64] {
			return odeblock.Stack(tp.Param(x), tp.Param(m0))
		}
	case "adamnode":
		f.dyn = odeblock.NewAdamNODE[float64](field, -1, 1, odeblock.ScaleSqrt)
		f.state = func(tp *autograd.Tape[float64]) autograd.Var[float64] {
			m := tp.Param(m0)
			return odeblock.Stack(tp.Param(x), m, autograd.AddConst(autograd.Square(m), 0.5))
		}
	}
	dyn, ins := f.dyn, f.inputs
	f.params = func() []*autograd.Param[float64] {
		return append(append([]*autograd.Param[float64]{}, ins...), dyn.Params()...)
	}
	return f
}

// TestDiscreteModesOnDevice: Backprop, Checkpoint and Recursive (with a
// budget below the steps, so that states are recomputed), and Interpolated
// (its dense output kept on the device), on a device (the parking fake)
// give the CPU engine's trajectory and gradients, with output times inside
// steps (dopri5, tsit5) and at step ends (rk4), the dense output each of
// the three forms (dopri5's quartic, tsit5's weights, rk4's Hermite), and,
// with a field the device computes whole, their backward pass copies
// nothing of the state to the host: the step adjoint's sums, the
// recomputed steps, the stage tapes and the dense output stay on the
// device.
func TestDiscreteModesOnDevice(t *testing.T) {
	cpu := tensor.EngineFor[float64](tensor.Gonum(1))
	dev := enginetest.NewParkingDevice(cpu)
	solvers := map[string]odeblock.Options{
		"dopri5": {RTol: 1e-7, ATol: 1e-7},
		"tsit5":  {Method: "tsit5", RTol: 1e-7, ATol: 1e-7},
		"rk4":    {Method: "rk4", Step: 0.1},
	}
	for _, mode := range []odeblock.GradMode{odeblock.Backprop{}, odeblock.Checkpoint{}, odeblock.Recursive{Budget: 2}, odeblock.Interpolated{}} {
		for _, name := range []string{"node", "hbnode", "adamnode"} {
			for sname, solver := range solvers {
				t.Run(fmt.Sprintf("%v/%s/%s", mode, name, sname), func(t *testing.T) {
					var backwardNFE []int
					run := func(e tensor.Engine[float64]) (traj, grads []float64, steps, synced int) {
						f := ewFamily(name, 3)
						b := &odeblock.Block[float64]{Dynamics: f.dyn, Times: []float64{0, 0.25, 0.5, 1.05}, Mode: mode, Solver: solver}
						tp := autograd.NewTape(e)
						z, err := b.Trajectory(tp, f.state(tp))
						if err != nil {
							t.Fatal(err)
						}
						l := autograd.Mean(autograd.Square(z))
						dev.Reset()
						if err := tp.Backward(l); err != nil {
							t.Fatal(err)
						}
						_, synced = dev.Syncs()
						backwardNFE = append(backwardNFE, b.Stats().Backward.NFE)
						traj = append(traj, z.Value().ReadData()...)
						for _, p := range f.params() {
							grads = append(grads, p.Grad.ReadData()...)
						}
						return traj, grads, b.Stats().Forward.Accepted, synced
					}
					wantTraj, wantGrads, _, _ := run(cpu)
					gotTraj, gotGrads, steps, synced := run(dev)
					approx := cmpopts.EquateApprox(1e-9, 1e-12)
					if diff := cmp.Diff(wantTraj, gotTraj, approx); diff != "" {
						t.Errorf("trajectory (-cpu +device):\n%s", diff)
					}
					if diff := cmp.Diff(wantGrads, gotGrads, approx); diff != "" {
						t.Errorf("gradients (-cpu +device):\n%s", diff)
					}
					if backwardNFE[0] != backwardNFE[1] {
						t.Errorf("backward evaluations: %d on the CPU, %d on the device", backwardNFE[0], backwardNFE[1])
					}
					if mode == (odeblock.Recursive{Budget: 2}) && steps <= 2 {
						t.Errorf("%d steps: the budget of 2 recomputes nothing", steps)
					}
					if synced >= batch*width {
						t.Errorf("the backward pass over %d steps copied %d elements to the host, as many as a batch's %d", steps, synced, batch*width)
					}
				})
			}
		}
	}
}

// fusedDevice is the parking fake with the families' fused right-hand
// sides (the methods package cuda's engine has), computed on the host from
// the equations, counting its calls.
type fusedDevice struct {
	*enginetest.ParkingDevice[float64]
	calls *int
}

func (d fusedDevice) Elementwise() tensor.Elementwise[float64] {
	return fusedElementwise{d.ParkingDevice.Elementwise(), d.calls}
}

type fusedElementwise struct {
	tensor.Elementwise[float64]
	calls *int
}

func adamS(v, eps float64, softplus bool) (s, ds float64) {
	if softplus {
		sp := math.Log1p(math.Exp(v))
		return math.Sqrt(sp) + eps, 0.5 / math.Sqrt(sp) / (1 + math.Exp(-v))
	}
	s = math.Sqrt(v + eps)
	return s, 1 / (2 * s)
}

func (f fusedElementwise) AdamRHS(out, z, g *tensor.Tensor[float64], a1, a2 float64, eps float64, softplus bool) {
	*f.calls++
	n, zd, gd, od := g.Len(), z.ReadData(), g.ReadData(), out.Data()
	for i := range n {
		m, v, gi := zd[n+i], zd[2*n+i], gd[i]
		s, _ := adamS(v, eps, softplus)
		od[i], od[n+i], od[2*n+i] = -m/s, a1*(-gi-m), a2*(gi*gi-v)
	}
}

func (f fusedElementwise) AdamRHSBackward(gz, gg, gr, z, g, c *tensor.Tensor[float64], a1, a2 float64, eps float64, softplus bool) {
	*f.calls++
	n, zd, gd, cd := g.Len(), z.ReadData(), g.ReadData(), c.ReadData()
	gzd, ggd, grd := gz.Data(), gg.Data(), gr.Data()
	var s1, s2 float64
	for i := range n {
		m, v, gi, ch, cm, cv := zd[n+i], zd[2*n+i], gd[i], cd[i], cd[n+i], cd[2*n+i]
		s, ds := adamS(v, eps, softplus)
		gzd[i], gzd[n+i], gzd[2*n+i] = 0, -ch/s-a1*cm, ch*m*ds/(s*s)-a2*cv
		ggd[i] = -a1*cm + 2*a2*gi*cv
		s1 += cm * (-gi - m)
		s2 += cv * (gi*gi - v)
	}
	grd[0], grd[1] = a1*(1-a1)*s1, a2*(1-a2)*s2
}

func (f fusedElementwise) HBRHS(out, z, g *tensor.Tensor[float64], gamma float64) {
	*f.calls++
	n, zd, gd, od := g.Len(), z.ReadData(), g.ReadData(), out.Data()
	for i := range n {
		od[i], od[n+i] = -zd[n+i], gd[i]-gamma*zd[n+i]
	}
}

func (f fusedElementwise) HBRHSBackward(gz, gg, gr, z, c *tensor.Tensor[float64], gamma float64) {
	*f.calls++
	n, zd, cd := gg.Len(), z.ReadData(), c.ReadData()
	gzd, ggd := gz.Data(), gg.Data()
	var s float64
	for i := range n {
		gzd[i], gzd[n+i] = 0, -cd[i]-gamma*cd[n+i]
		ggd[i] = cd[n+i]
		s += cd[n+i] * zd[n+i]
	}
	gr.Data()[0] = -gamma * (1 - gamma) * s
}

func (f fusedElementwise) GHBRHS(out, z, g *tensor.Tensor[float64], gamma, xi float64) {
	*f.calls++
	n, zd, gd, od := g.Len(), z.ReadData(), g.ReadData(), out.Data()
	for i := range n {
		od[i], od[n+i] = math.Tanh(-zd[n+i]), gd[i]-gamma*zd[n+i]+xi*zd[i]
	}
}

func (f fusedElementwise) GHBRHSBackward(gz, gg, gr, z, out, c *tensor.Tensor[float64], gamma, xi, dxi float64) {
	*f.calls++
	n, zd, od, cd := gg.Len(), z.ReadData(), out.ReadData(), c.ReadData()
	gzd, ggd, grd := gz.Data(), gg.Data(), gr.Data()
	var sm, sh float64
	for i := range n {
		gzd[i], gzd[n+i] = xi*cd[n+i], -cd[i]*(1-od[i]*od[i])-gamma*cd[n+i]
		ggd[i] = cd[n+i]
		sm += cd[n+i] * zd[n+i]
		sh += cd[n+i] * zd[i]
	}
	grd[0], grd[1] = -gamma*(1-gamma)*sm, dxi*sh
}

// TestFusedRHSOnDevice: on a device engine whose Elementwise has the
// families' fused right-hand sides, AdamNODE (both scales), HBNODE and
// GHBNODE with φ = tanh (not hardtanh, recorded op by op) record F through
// them, forward and backward, in the Adjoint mode's
// forward and backward solves and in Backprop's stage tapes, with the CPU
// engine's gradients.
func TestFusedRHSOnDevice(t *testing.T) {
	cpu := tensor.EngineFor[float64](tensor.Gonum(1))
	for _, name := range []string{"hbnode", "ghbnode", "ghbnode-hardtanh", "adamnode", "adamnode-softplus"} {
		for _, mode := range []odeblock.GradMode{odeblock.Adjoint{}, odeblock.Backprop{}} {
			t.Run(fmt.Sprintf("%s/%v", name, mode), func(t *testing.T) {
				run := func(e tensor.Engine[float64]) []float64 {
					family, variant, _ := strings.Cut(name, "-")
					f := ewFamily(family, 4)
					switch variant {
					case "softplus":
						f.dyn.(*odeblock.AdamNODE[float64]).S = odeblock.ScaleSoftplus
					case "hardtanh": // op by op: the fused node is tanh's
						f.dyn.(*odeblock.GHBNODE[float64]).Phi = odeblock.PhiHardtanh
					}
					b := &odeblock.Block[float64]{Dynamics: f.dyn, Times: []float64{0, 0.6}, Mode: mode,
						Solver: odeblock.Options{RTol: 1e-9, ATol: 1e-9}}
					tp := autograd.NewTape(e)
					z, err := b.Forward(tp, f.state(tp))
					if err != nil {
						t.Fatal(err)
					}
					if err := tp.Backward(autograd.Mean(autograd.Square(z))); err != nil {
						t.Fatal(err)
					}
					var grads []float64
					for _, p := range f.params() {
						grads = append(grads, p.Grad.ReadData()...)
					}
					return grads
				}
				want := run(cpu)
				calls := 0
				got := run(fusedDevice{enginetest.NewParkingDevice(cpu), &calls})
				if fused := !strings.HasSuffix(name, "hardtanh"); (calls > 0) != fused {
					t.Errorf("the fused right-hand side called %d times; want calls %v", calls, fused)
				}
				tol := 1e-9
				if strings.HasSuffix(name, "hardtanh") {
					// The host's and the device's rounding of the error
					// norm give slightly other step sizes (the same steps
					// taken), which hardtanh's kinks amplify; with fixed
					// steps the gradients are equal to the bit.
					tol = 1e-5
				}
				if diff := cmp.Diff(want, got, cmpopts.EquateApprox(tol, 1e-12)); diff != "" {
					t.Errorf("gradients (-cpu +device):\n%s", diff)
				}
			})
		}
	}
}

// TestAdjointRecoveryStaysOnDevice: an HBNODE with an elementwise field
// and strong damping over [0, 30], whose reverse-time reconstruction
// drifts: on a device (the parking fake) the adjoint recovers there — the
// stretch re-solved and its states kept in the device's memory, the drift
// checked from sums of squares — copying nothing to the host, with the CPU
// engine's gradients.
func TestAdjointRecoveryStaysOnDevice(t *testing.T) {
	cpu := tensor.EngineFor[float64](tensor.Gonum(1))
	dev := enginetest.NewParkingDevice(cpu)
	run := func(e tensor.Engine[float64]) ([]float64, odeblock.BlockStats, int) {
		f := ewFamily("hbnode", 6)
		f.dyn.(*odeblock.HBNODE[float64]).GammaRaw.Value.Data()[0] = 3
		b := &odeblock.Block[float64]{Dynamics: f.dyn, Times: []float64{0, 30}, Solver: odeblock.Options{RTol: 1e-6, ATol: 1e-6}}
		tp := autograd.NewTape(e)
		z, err := b.Forward(tp, f.state(tp))
		if err != nil {
			t.Fatal(err)
		}
		l := autograd.Sum(autograd.Square(odeblock.Part(z, 0, 2)))
		dev.Reset()
		if err := tp.Backward(l); err != nil {
			t.Fatal(err)
		}
		_, synced := dev.Syncs()
		var g []float64
		for _, p := range f.params() {
			g = append(g, p.Grad.ReadData()...)
		}
		return g, b.Stats(), synced
	}
	want, _, _ := run(cpu)
	got, st, synced := run(dev)
	if st.Recovered == 0 {
		t.Fatal("no stretch recovered: the dynamics do not drift")
	}
	if synced != 0 {
		t.Errorf("the recovering backward pass copied %d elements to the host", synced)
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(1e-6, 1e-9)); diff != "" {
		t.Errorf("gradients (-cpu +device):\n%s", diff)
	}
}

// TestRecursiveWithinBudget: a Recursive solve of no more steps than its
// budget keeps every step's state in the forward, as Checkpoint does, and
// recomputes none: its backward pass takes Checkpoint's evaluations, on the
// CPU and on a device.
func TestRecursiveWithinBudget(t *testing.T) {
	cpu := tensor.EngineFor[float64](tensor.Gonum(1))
	for _, e := range []tensor.Engine[float64]{cpu, enginetest.NewParkingDevice(cpu)} {
		nfe := map[string]int{}
		for _, mode := range []odeblock.GradMode{odeblock.Checkpoint{}, odeblock.Recursive{Budget: 16}} {
			f := ewFamily("node", 2)
			b := &odeblock.Block[float64]{Dynamics: f.dyn, Times: []float64{0, 1}, Mode: mode, Solver: odeblock.Options{Method: "rk4", Step: 0.1}}
			tp := autograd.NewTape(e)
			z, err := b.Forward(tp, f.state(tp))
			if err != nil {
				t.Fatal(err)
			}
			if err := tp.Backward(autograd.Sum(autograd.Square(z))); err != nil {
				t.Fatal(err)
			}
			nfe[mode.String()] = b.Stats().Backward.NFE
		}
		if nfe["recursive"] != nfe["checkpoint"] {
			t.Errorf("backward evaluations: recursive %d, checkpoint %d", nfe["recursive"], nfe["checkpoint"])
		}
	}
}

// TestFusedRHSSecondOrder: a gradient penalty through the families' fused
// right-hand sides on a device (their backward recorded in ops with
// CreateGraph) gives the CPU engine's second derivatives.
func TestFusedRHSSecondOrder(t *testing.T) {
	cpu := tensor.EngineFor[float64](tensor.Gonum(1))
	for _, name := range []string{"hbnode", "ghbnode", "adamnode"} {
		t.Run(name, func(t *testing.T) {
			run := func(e tensor.Engine[float64]) []float64 {
				f := ewFamily(name, 5)
				tp := autograd.NewTape(e)
				z := f.state(tp)
				out := f.dyn.Eval(tp, 0.4, z)
				gs, err := autograd.Grad([]autograd.Var[float64]{autograd.Sum(autograd.Square(out))}, []autograd.Var[float64]{z}, autograd.GradOptions[float64]{CreateGraph: true})
				if err != nil {
					t.Fatal(err)
				}
				if err := tp.Backward(autograd.Sum(autograd.Square(gs.Inputs[0]))); err != nil {
					t.Fatal(err)
				}
				var grads []float64
				for _, p := range f.params() {
					grads = append(grads, p.Grad.ReadData()...)
				}
				return grads
			}
			want := run(cpu)
			calls := 0
			got := run(fusedDevice{enginetest.NewParkingDevice(cpu), &calls})
			if calls == 0 {
				t.Error("the fused right-hand side was not called")
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateApprox(1e-9, 1e-12)); diff != "" {
				t.Errorf("second derivatives (-cpu +device):\n%s", diff)
			}
		})
	}
}
