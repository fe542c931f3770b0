package odeblock_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// mlp is the field f(h, t) = W2·tanh(W1·[h, t] + b1) + b2 on [B, in].
type mlp struct {
	w1, b1, w2, b2 *autograd.Param[float64]
}

func newMLP(rng *rand.Rand, name string, in, hidden, out int, scale float64) *mlp {
	p := func(n string, s ...int) *autograd.Param[float64] {
		return autograd.NewParam(name+"."+n, tensor.RandN[float64](rng, 0, scale, s...))
	}
	return &mlp{w1: p("w1", hidden, in+1), b1: p("b1", hidden), w2: p("w2", out, hidden), b2: p("b2", out)}
}

func (m *mlp) ForwardT(tp *autograd.Tape[float64], t float64, h autograd.Var[float64]) autograd.Var[float64] {
	x := autograd.ConcatTime(h, t)
	z := autograd.Tanh(autograd.Linear(x, tp.Param(m.w1), tp.Param(m.b1)))
	return autograd.Linear(z, tp.Param(m.w2), tp.Param(m.b2))
}

func (m *mlp) Params() []*autograd.Param[float64] {
	return []*autograd.Param[float64]{m.w1, m.b1, m.w2, m.b2}
}

// family is one model family on a batch of B feature vectors of width D,
// with its initial-state parameters.
type family struct {
	name   string
	dyn    odeblock.Dynamics[float64]
	inputs []*autograd.Param[float64]                             // x, and m0 / u0
	state  func(tp *autograd.Tape[float64]) autograd.Var[float64] // z0 from the inputs
	params func() []*autograd.Param[float64]                      // everything to check
}

const batch, width = 2, 3

func families(seed uint64) []family {
	return familiesOf(seed, batch, func(f odeblock.Field[float64]) odeblock.Field[float64] { return f })
}

// familiesOf is families with a batch of the given rows and each field
// passed through wrap.
func familiesOf(seed uint64, rows int, wrap func(odeblock.Field[float64]) odeblock.Field[float64]) []family {
	var out []family
	for _, name := range []string{"node", "anode", "sonode", "hbnode", "ghbnode", "adamnode", "adamnode-softplus"} {
		rng := rand.New(rand.NewPCG(seed, 7))
		x := autograd.NewParam("x", tensor.RandN[float64](rng, 0, 1, rows, width))
		m0 := autograd.NewParam("m0", tensor.RandN[float64](rng, 0, 0.5, rows, width))
		f := family{name: name, inputs: []*autograd.Param[float64]{x, m0}}
		stack := func(tp *autograd.Tape[float64]) autograd.Var[float64] {
			return odeblock.Stack(tp.Param(x), tp.Param(m0))
		}
		switch name {
		case "node":
			f.dyn = &odeblock.NODE[float64]{F: wrap(newMLP(rng, "f", width, 5, width, 0.5))}
			f.inputs = f.inputs[:1]
			f.state = func(tp *autograd.Tape[float64]) autograd.Var[float64] { return tp.Param(x) }
		case "anode":
			f.dyn = &odeblock.NODE[float64]{F: wrap(newMLP(rng, "f", width+2, 5, width+2, 0.5))}
			f.inputs = f.inputs[:1]
			f.state = func(tp *autograd.Tape[float64]) autograd.Var[float64] {
				return odeblock.AugmentChannels(tp, tp.Param(x), 2)
			}
		case "sonode":
			f.dyn = &odeblock.SONODE[float64]{F: wrap(newMLP(rng, "f", 2*width, 5, width, 0.5))}
			f.state = stack
		case "hbnode":
			f.dyn = odeblock.NewHBNODE[float64](wrap(newMLP(rng, "f", width, 5, width, 0.5)), -1)
			f.state = stack
		case "ghbnode":
			f.dyn = odeblock.NewGHBNODE[float64](wrap(newMLP(rng, "f", width, 5, width, 0.5)), -1, 0.5)
			f.state = stack
		case "adamnode", "adamnode-softplus":
			s := odeblock.ScaleSqrt
			if name == "adamnode-softplus" {
				s = odeblock.ScaleSoftplus
			}
			f.dyn = odeblock.NewAdamNODE[float64](wrap(newMLP(rng, "f", width, 5, width, 0.5)), -1, 1, s)
			f.state = func(tp *autograd.Tape[float64]) autograd.Var[float64] {
				m := tp.Param(m0)
				return odeblock.Stack(tp.Param(x), m, autograd.AddConst(autograd.Square(m), 0.5))
			}
		}
		dyn := f.dyn
		ins := f.inputs
		f.params = func() []*autograd.Param[float64] {
			return append(append([]*autograd.Param[float64]{}, ins...), dyn.Params()...)
		}
		out = append(out, f)
	}
	return out
}

func blockFunc(t *testing.T, f family, b *odeblock.Block[float64]) func(tp *autograd.Tape[float64]) autograd.Var[float64] {
	return func(tp *autograd.Tape[float64]) autograd.Var[float64] {
		z, err := b.Trajectory(tp, f.state(tp))
		if err != nil {
			t.Fatal(err)
		}
		return z
	}
}

var modes = []odeblock.GradMode{odeblock.Adjoint{}, odeblock.Backprop{}, odeblock.Checkpoint{}, odeblock.Recursive{Budget: 3}, odeblock.Interpolated{}, odeblock.Interpolated{Budget: 2}}

// TestGradientsFiniteDifferences checks every family in every mode against
// central differences, through z0 (and the initial-state inputs), f's
// parameters and the family's scalars, with outputs at several times.
func TestGradientsFiniteDifferences(t *testing.T) {
	for _, f := range families(1) {
		for _, mode := range modes {
			for _, solver := range []string{"rk4", "dopri5"} {
				t.Run(fmt.Sprintf("%s/%v/%s", f.name, mode, solver), func(t *testing.T) {
					b := &odeblock.Block[float64]{Dynamics: f.dyn, Times: []float64{0, 0.3, 0.8}, Mode: mode}
					opt := autograd.GradCheckOptions{Step: 1e-6, AbsTol: 1e-8, RelTol: 1e-6}
					_, interpolated := mode.(odeblock.Interpolated)
					switch {
					case solver == "rk4" && (mode == (odeblock.Adjoint{}) || interpolated):
						t.Skip("the fixed-step adjoint (reconstructing or interpolating) differs from the discrete gradient by the discretisation error; checked with dopri5")
					case solver == "rk4":
						b.Solver = odeblock.Options{Method: "rk4", Step: 0.05}
					default:
						b.Solver = odeblock.Options{RTol: 1e-12, ATol: 1e-12}
						opt = autograd.GradCheckOptions{Step: 1e-5, AbsTol: 1e-7, RelTol: 1e-5}
					}
					rep, err := autograd.CheckGradients(blockFunc(t, f, b), f.params(), opt)
					if err != nil {
						t.Fatalf("%v\n%v", err, rep)
					}
				})
			}
		}
	}
}

// gradients runs one forward and backward pass and returns every parameter's
// gradient, flattened in order, with the block's stats.
func gradients(t *testing.T, f family, b *odeblock.Block[float64]) ([]float64, odeblock.BlockStats) {
	t.Helper()
	return gradientsOn(t, tensor.EngineFor[float64](tensor.Default()), f, b)
}

// gradientsOn is gradients computed with eng.
func gradientsOn(t *testing.T, eng tensor.Engine[float64], f family, b *odeblock.Block[float64]) ([]float64, odeblock.BlockStats) {
	t.Helper()
	params := f.params()
	autograd.ZeroGrads(params)
	tp := autograd.NewTape(eng)
	z, err := b.Trajectory(tp, f.state(tp))
	if err != nil {
		t.Fatal(err)
	}
	r := tensor.New[float64](z.Shape()...)
	for i := range r.Data() {
		r.Data()[i] = math.Sin(float64(i) + 1)
	}
	if err := tp.BackwardWith(z, r); err != nil {
		t.Fatal(err)
	}
	var g []float64
	for _, p := range params {
		g = append(g, p.Grad.Data()...)
	}
	return g, b.Stats()
}

func maxRelDiff(a, b []float64) float64 {
	var scale, d float64
	for i := range a {
		scale = math.Max(scale, math.Abs(b[i]))
		d = math.Max(d, math.Abs(a[i]-b[i]))
	}
	return d / math.Max(scale, 1e-300)
}

// TestModesAgree: Backprop and Checkpoint give the same gradients; Adjoint
// agrees with them to the solver tolerance; the specialised adjoints give
// the generic adjoint's numbers.
func TestModesAgree(t *testing.T) {
	for _, f := range families(2) {
		t.Run(f.name, func(t *testing.T) {
			times := []float64{0, 0.5, 1}
			solver := odeblock.Options{RTol: 1e-9, ATol: 1e-9}
			bp, _ := gradients(t, f, &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: odeblock.Backprop{}})
			ck, _ := gradients(t, f, &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: odeblock.Checkpoint{}})
			if d := maxRelDiff(ck, bp); d > 1e-10 {
				t.Errorf("checkpoint vs backprop: relative difference %.3g", d)
			}
			adj, st := gradients(t, f, &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: odeblock.Adjoint{}})
			if d := maxRelDiff(adj, bp); d > 1e-6 {
				t.Errorf("adjoint vs backprop: relative difference %.3g", d)
			}
			if st.Backward.NFE == 0 || st.Forward.NFE == 0 {
				t.Errorf("stats not counted: %+v", st)
			}
			gen, _ := gradients(t, f, &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: odeblock.Adjoint{Generic: true}})
			if d := maxRelDiff(adj, gen); d > 1e-8 {
				t.Errorf("specialised vs generic adjoint: relative difference %.3g", d)
			}
			semi, _ := gradients(t, f, &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: odeblock.Adjoint{Seminorm: true}})
			if d := maxRelDiff(semi, bp); d > 1e-5 {
				t.Errorf("seminorm adjoint vs backprop: relative difference %.3g", d)
			}
		})
	}
}

// TestDop853Modes: with dop853 (twelve stages, FSAL, the combined error
// estimate; its dense-output stages never enter a gradient) every mode
// gives the same gradients: Backprop and Checkpoint to rounding, Recursive
// and Adjoint to the tolerance, on every family.
func TestDop853Modes(t *testing.T) {
	for _, f := range families(2) {
		times := []float64{0, 0.5, 1}
		solver := odeblock.Options{Method: "dop853", RTol: 1e-9, ATol: 1e-9}
		bp, _ := gradients(t, f, &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: odeblock.Backprop{}})
		for _, m := range []struct {
			mode odeblock.GradMode
			tol  float64
		}{{odeblock.Checkpoint{}, 1e-10}, {odeblock.Recursive{Budget: 2}, 1e-10}, {odeblock.Adjoint{}, 1e-6}} {
			g, _ := gradients(t, f, &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: m.mode})
			if d := maxRelDiff(g, bp); d > m.tol {
				t.Errorf("%s: %v vs backprop: relative difference %.3g", f.name, m.mode, d)
			}
		}
	}
}

// longHorizonAdam is the AdamNODE (tanh MLP field 3 → 8 → 3, batch 4,
// s = √(v + ε)) whose backward reconstruction diverges over [0, 16].
func longHorizonAdam() family {
	rng := rand.New(rand.NewPCG(3, 3))
	x := autograd.NewParam("x", tensor.RandN[float64](rng, 0, 1, 4, width))
	m0 := autograd.NewParam("m0", tensor.RandN[float64](rng, 0, 1, 4, width))
	dyn := odeblock.NewAdamNODE[float64](newMLP(rng, "f", width, 8, width, 1), -5, 5, odeblock.ScaleSqrt)
	f := family{name: "adamnode", dyn: dyn, inputs: []*autograd.Param[float64]{x, m0},
		state: func(tp *autograd.Tape[float64]) autograd.Var[float64] {
			return odeblock.AdamInitialState(tp.Param(x), tp.Param(m0))
		}}
	f.params = func() []*autograd.Param[float64] { return append([]*autograd.Param[float64]{x, m0}, dyn.Params()...) }
	return f
}

// dissipativeHBNODE is issue 12's HBNODE (γ_raw = 3, tanh MLP field
// 4 → 16 → 4, batch 3) whose reconstruction drifts over [0, 40].
func dissipativeHBNODE() family {
	const d, b = 4, 3
	rng := rand.New(rand.NewPCG(12, 1))
	x := autograd.NewParam("x", tensor.RandN[float64](rng, 0, 1, b, d))
	m0 := autograd.NewParam("m0", tensor.RandN[float64](rng, 0, 0.5, b, d))
	dyn := odeblock.NewHBNODE[float64](newMLP(rng, "f", d, 16, d, 0.5), 3)
	f := family{name: "hbnode", dyn: dyn, inputs: []*autograd.Param[float64]{x, m0},
		state: func(tp *autograd.Tape[float64]) autograd.Var[float64] {
			return odeblock.Stack(tp.Param(x), tp.Param(m0))
		}}
	f.params = func() []*autograd.Param[float64] { return append([]*autograd.Param[float64]{x, m0}, dyn.Params()...) }
	return f
}

// TestLongHorizonAdamNODE: over t ∈ [0, 16] the backward reconstruction of
// AdamNODE's (h, m, v) diverges in reverse time. With FailOnDrift the
// adjoint fails with an error of the backward phase (never NaN
// gradients); by default it recovers, re-solving the forward, and its
// gradients agree with a tightly solved Checkpoint's; Checkpoint gives
// the discrete gradient, equal to Backprop's.
func TestLongHorizonAdamNODE(t *testing.T) {
	f := longHorizonAdam()
	dyn := f.dyn
	solver := odeblock.Options{RTol: 1e-6, ATol: 1e-6}
	times := []float64{0, 16}

	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	b := &odeblock.Block[float64]{Dynamics: dyn, Times: times, Solver: solver, Mode: odeblock.Adjoint{FailOnDrift: true}}
	z, err := b.Forward(tp, f.state(tp))
	if err != nil {
		t.Fatal(err)
	}
	err = tp.Backward(autograd.Sum(z))
	var se *odeblock.SolveError
	if !errors.As(err, &se) || se.Phase != "backward" || !strings.Contains(err.Error(), "backward") {
		t.Fatalf("adjoint over [0, 16]: got %v, want a backward-phase solve error", err)
	}
	t.Logf("adjoint: %v", err)

	// The gradients at this tolerance are themselves about 1e-4 off the
	// exact ones (Checkpoint's are): the recovered adjoint must do as well.
	ck, _ := gradients(t, f, &odeblock.Block[float64]{Dynamics: dyn, Times: times, Solver: solver, Mode: odeblock.Checkpoint{}})
	ref, _ := gradients(t, f, &odeblock.Block[float64]{Dynamics: dyn, Times: times, Solver: odeblock.Options{RTol: 1e-10, ATol: 1e-10}, Mode: odeblock.Checkpoint{}})
	rec, st := gradients(t, f, &odeblock.Block[float64]{Dynamics: dyn, Times: times, Solver: solver, Mode: odeblock.Adjoint{}})
	if d, dck := maxRelDiff(rec, ref), maxRelDiff(ck, ref); d > 2*dck {
		t.Errorf("recovered adjoint vs checkpoint at 1e-10: relative difference %.3g; checkpoint at 1e-6: %.3g", d, dck)
	}
	if st.Recovered == 0 {
		t.Errorf("no stretch counted as recovered")
	}
	t.Logf("recovered adjoint: forward NFE %d, backward NFE %d, %d stretches re-solved", st.Forward.NFE, st.Backward.NFE, st.Recovered)

	bp, _ := gradients(t, f, &odeblock.Block[float64]{Dynamics: dyn, Times: times, Solver: solver, Mode: odeblock.Backprop{}})
	if d := maxRelDiff(ck, bp); d > 1e-10 {
		t.Errorf("checkpoint vs backprop: relative difference %.3g", d)
	}
	for i, v := range ck {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("checkpoint gradient %d is %v", i, v)
		}
	}
}

// TestBlockReuse runs the same Block (which keeps its solvers and buffers)
// several times, in every mode and after a change of batch size: the
// gradients must equal those of a fresh Block, bit for bit.
func TestBlockReuse(t *testing.T) {
	for _, mode := range modes {
		f := families(4)[5] // adamnode
		solver := odeblock.Options{RTol: 1e-7, ATol: 1e-7}
		reused := &odeblock.Block[float64]{Dynamics: f.dyn, Times: []float64{0, 0.4, 1}, Solver: solver, Mode: mode}
		want, _ := gradients(t, f, &odeblock.Block[float64]{Dynamics: f.dyn, Times: []float64{0, 0.4, 1}, Solver: solver, Mode: mode})
		for i := 0; i < 3; i++ {
			if i == 1 {
				// A pass at another batch size in between.
				rng := rand.New(rand.NewPCG(9, 9))
				g := f
				x := autograd.NewParam("x", tensor.RandN[float64](rng, 0, 1, batch+3, width))
				g.inputs = []*autograd.Param[float64]{x}
				g.state = func(tp *autograd.Tape[float64]) autograd.Var[float64] {
					m := autograd.Scale(tp.Param(x), 0.5)
					return odeblock.Stack(tp.Param(x), m, autograd.AddConst(autograd.Square(m), 0.5))
				}
				g.params = func() []*autograd.Param[float64] { return append([]*autograd.Param[float64]{x}, f.dyn.Params()...) }
				gradients(t, g, reused)
				continue
			}
			got, _ := gradients(t, f, reused)
			for k := range want {
				if got[k] != want[k] {
					t.Fatalf("%v, pass %d: gradient %d = %v, fresh block %v", mode, i, k, got[k], want[k])
				}
			}
		}
	}
}

// TestNoGradForward: on a no-grad tape every mode computes the same values
// as with gradients on (and records nothing for a backward pass).
func TestNoGradForward(t *testing.T) {
	f := families(5)[5]
	for _, mode := range modes {
		b := &odeblock.Block[float64]{Dynamics: f.dyn, Mode: mode, Times: []float64{0, 0.5, 1}, Solver: odeblock.Options{RTol: 1e-8, ATol: 1e-8}}
		eng := tensor.EngineFor[float64](tensor.Default())
		tp := autograd.NewTape(eng)
		z, err := b.Trajectory(tp, f.state(tp))
		if err != nil {
			t.Fatal(err)
		}
		ng := autograd.NewTape(eng)
		ng.SetNoGrad(true)
		zn, err := b.Trajectory(ng, f.state(ng))
		if err != nil {
			t.Fatal(err)
		}
		if ng.Len() != 0 {
			t.Errorf("%v: no-grad tape recorded %d ops", mode, ng.Len())
		}
		for i, v := range z.Value().Data() {
			if zn.Value().Data()[i] != v {
				t.Fatalf("%v: no-grad value %d = %v, with gradients %v", mode, i, zn.Value().Data()[i], v)
			}
		}
	}
}

// TestAdamAdjointMatchesGeneric compares AdamNODE's specialised adjoint
// evaluation with the VJP of its whole dynamics at a random point, for a
// small state and one large enough to be split across workers.
func TestAdamAdjointMatchesGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, rows := range []int{3, 40} {
		const width = 2000 // 40 rows: 80000 elements in h, split across workers
		w := autograd.NewParam("w", tensor.FromSlice([]float64{0.7}, 1))
		field := odeblock.FieldFunc([]*autograd.Param[float64]{w}, func(tp *autograd.Tape[float64], tt float64, h autograd.Var[float64]) autograd.Var[float64] {
			return autograd.AddConst(autograd.Tanh(autograd.MulScalar(h, tp.Param(w))), tt)
		})
		for _, s := range []odeblock.Scale{odeblock.ScaleSqrt, odeblock.ScaleSoftplus} {
			dyn := odeblock.NewAdamNODE[float64](field, -0.5, 0.8, s)
			params := dyn.Params()
			z := tensor.RandN[float64](rng, 0, 1, 3*rows, width)
			v := z.Slice(2*rows, 3*rows)
			v.Map(v, func(x float64) float64 { return x*x + 0.1 }) // v > 0 for √(v+ε)
			a := tensor.RandN[float64](rng, 0, 1, 3*rows, width)
			eng := tensor.EngineFor[float64](tensor.Backends(3)[len(tensor.Backends(3))-1])
			pb := autograd.NewPullback(eng)
			dz, da := tensor.New[float64](z.Shape()...), tensor.New[float64](z.Shape()...)
			dg := []*tensor.Tensor[float64]{tensor.New[float64](1), tensor.New[float64](1), tensor.New[float64](1)}
			if err := dyn.EvalAdjoint(pb, 0.3, z, a, dz, da, dg); err != nil {
				t.Fatal(err)
			}
			gda := tensor.New[float64](z.Shape()...)
			gdg := []*tensor.Tensor[float64]{tensor.New[float64](1), tensor.New[float64](1), tensor.New[float64](1)}
			val := autograd.NewPullback(eng).MustVJP(func(tp *autograd.Tape[float64], in []autograd.Var[float64]) autograd.Var[float64] {
				return dyn.Eval(tp, 0.3, in[0])
			}, []*tensor.Tensor[float64]{z}, a, autograd.VJPDest[float64]{Inputs: []*tensor.Tensor[float64]{gda}, Params: params, ParamGrads: gdg})
			for i, x := range val.Data() {
				if d := math.Abs(dz.Data()[i] - x); d > 1e-12*math.Max(1, math.Abs(x)) {
					t.Fatalf("rows %d, %v: dz[%d] = %v, generic %v", rows, s, i, dz.Data()[i], x)
				}
			}
			for i, x := range gda.Data() {
				if d := math.Abs(da.Data()[i] + x); d > 1e-10*math.Max(1, math.Abs(x)) {
					t.Fatalf("rows %d, %v: da[%d] = %v, generic %v", rows, s, i, da.Data()[i], -x)
				}
			}
			for j := range gdg {
				x := -gdg[j].Data()[0]
				if d := math.Abs(dg[j].Data()[0] - x); d > 1e-9*math.Max(1, math.Abs(x)) {
					t.Errorf("rows %d, %v: dg[%d] = %v, generic %v", rows, s, j, dg[j].Data()[0], x)
				}
			}
		}
	}
}

// TestPassesReuseMemory: a Block and tape reused from pass to pass record
// each pass in the memory of the one before, in every mode: a steady-state
// training iteration allocates a small fraction of what the first one did
// (Backprop used to allocate a tape per evaluation, every pass).
func TestPassesReuseMemory(t *testing.T) {
	// gonum's pure-Go GEMM allocates its own work on every large call: the
	// test needs an engine whose GEMM does not (OpenBLAS).
	eng := tensor.EngineFor[float64](tensor.Default())
	a, w, c := tensor.New[float64](1000, 64), tensor.New[float64](64, 64), tensor.New[float64](1000, 64)
	if allocs := testing.AllocsPerRun(3, func() { c.MatMul(eng, a, false, w, false) }); allocs > 0 {
		t.Skipf("the default engine's GEMM allocates (%v allocations a call): build with -tags openblas", allocs)
	}
	for _, mode := range modes {
		f := families(4)[5] // adamnode, on a batch of 1000: the buffers dominate
		x := autograd.NewParam("x", tensor.RandN[float64](rand.New(rand.NewPCG(9, 9)), 0, 1, 1000, width))
		f.params = func() []*autograd.Param[float64] { return append([]*autograd.Param[float64]{x}, f.dyn.Params()...) }
		f.state = func(tp *autograd.Tape[float64]) autograd.Var[float64] {
			m := autograd.Scale(tp.Param(x), 0.5)
			return odeblock.Stack(tp.Param(x), m, autograd.AddConst(autograd.Square(m), 0.5))
		}
		b := &odeblock.Block[float64]{Dynamics: f.dyn, Times: []float64{0, 0.4, 1}, Solver: odeblock.Options{RTol: 1e-6, ATol: 1e-6}, Mode: mode}
		tp := autograd.NewTape(eng)
		pass := func() uint64 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			tp.Reset()
			autograd.ZeroGrads(f.params())
			z, err := b.Forward(tp, f.state(tp))
			if err != nil {
				t.Fatal(err)
			}
			if err := tp.Backward(autograd.Mean(autograd.Square(z))); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			return after.TotalAlloc - before.TotalAlloc
		}
		first := pass()
		pass()
		steady := pass()
		t.Logf("%v: first %d, steady %d", mode, first, steady)
		if steady*10 > first {
			t.Errorf("%v: %d bytes allocated by a steady-state pass, %d by the first: want under a tenth", mode, steady, first)
		}
	}
}

// TestAdjointDrift is the silently wrong adjoint of a dissipative system:
// an HBNODE (γ_raw = 3) with a tanh MLP field 4 → 16 → 4 over
// t ∈ [0, 40], dopri5 at 1e-6. The reverse reconstruction of (h, m)
// diverges; before the drift check the adjoint returned finite gradients
// some 1e9 times too large without an error. Now Backward fails with
// ErrAdjointDrift under FailOnDrift and by default recovers with the right
// gradient; Checkpoint's agrees with central differences; and the check
// can be turned off (then the gradient is wrong: that is what the check is
// for).
func TestAdjointDrift(t *testing.T) {
	solver := odeblock.Options{RTol: 1e-6, ATol: 1e-6}
	times := []float64{0, 40}
	f := dissipativeHBNODE()
	loss := func(b *odeblock.Block[float64]) (*autograd.Tape[float64], autograd.Var[float64]) {
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
		z, err := b.Forward(tp, f.state(tp))
		if err != nil {
			t.Fatal(err)
		}
		return tp, autograd.Sum(autograd.Square(odeblock.Part(z, 0, 2)))
	}
	blk := &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: odeblock.Adjoint{FailOnDrift: true}}
	tp, l := loss(blk)
	autograd.ZeroGrads(f.params())
	err := tp.Backward(l)
	if !errors.Is(err, odeblock.ErrAdjointDrift) {
		t.Fatalf("adjoint over [0, 40]: got %v, want ErrAdjointDrift", err)
	}
	t.Logf("adjoint: %v", err)

	// Checkpoint: the gradient of γ_raw against central differences.
	gamma := f.dyn.Params()[len(f.dyn.Params())-1]
	ck := &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: odeblock.Checkpoint{}}
	autograd.ZeroGrads(f.params())
	tp, l = loss(ck)
	if err := tp.Backward(l); err != nil {
		t.Fatal(err)
	}
	got := gamma.Grad.Data()[0]
	value := func(v float64) float64 {
		old := gamma.Value.Data()[0]
		gamma.Value.Data()[0] = v
		defer func() { gamma.Value.Data()[0] = old }()
		_, l := loss(&odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: odeblock.Options{RTol: 1e-10, ATol: 1e-10}, Mode: odeblock.Checkpoint{}})
		return float64(l.Item())
	}
	const h = 1e-5
	g0 := gamma.Value.Data()[0]
	num := (value(g0+h) - value(g0-h)) / (2 * h)
	if math.Abs(got-num) > 1e-3*math.Max(1, math.Abs(num)) {
		t.Errorf("checkpoint ∂L/∂γ_raw = %.6g, central differences %.6g", got, num)
	}

	// By default the adjoint recovers: the right gradient.
	autograd.ZeroGrads(f.params())
	tp, l = loss(&odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: odeblock.Adjoint{}})
	if err := tp.Backward(l); err != nil {
		t.Fatalf("recovering adjoint: %v", err)
	}
	if rec := gamma.Grad.Data()[0]; math.Abs(rec-got) > 1e-4*math.Abs(got) {
		t.Errorf("recovered adjoint ∂L/∂γ_raw = %.8g, Checkpoint's %.8g (central differences %.6g)", rec, got, num)
	} else {
		t.Logf("recovered adjoint ∂L/∂γ_raw = %.8g, Checkpoint's %.8g, central differences %.8g", rec, got, num)
	}

	// With the check off the adjoint's gradient is far off.
	off := &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: odeblock.Adjoint{MaxDrift: -1}}
	autograd.ZeroGrads(f.params())
	tp, l = loss(off)
	if err := tp.Backward(l); err == nil {
		if adj := gamma.Grad.Data()[0]; math.Abs(adj-num) < 0.1*math.Abs(num) {
			t.Errorf("unchecked adjoint ∂L/∂γ_raw = %.6g is close to the true %.6g: the case no longer drifts, and tests nothing", adj, num)
		} else {
			t.Logf("unchecked adjoint ∂L/∂γ_raw = %.6g, true %.6g", adj, num)
		}
	}
}

// TestAdjointNorm: the backward solve's error norm is torchdiffeq's mixed
// norm, so the parameters' gradients count on their own: with them left
// out (Seminorm) the backward solve takes no more steps (fewer for the
// AdamNODE here), and the gradients of the state and of the parameters
// still agree with Checkpoint's to the tolerance.
func TestAdjointNorm(t *testing.T) {
	for _, f := range families(5) {
		if f.name != "node" && f.name != "adamnode" {
			continue
		}
		solver := odeblock.Options{RTol: 1e-5, ATol: 1e-5}
		times := []float64{0, 2}
		ck, _ := gradients(t, f, &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: odeblock.Options{RTol: 1e-10, ATol: 1e-10}, Mode: odeblock.Checkpoint{}})
		full, fs := gradients(t, f, &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: odeblock.Adjoint{}})
		semi, ss := gradients(t, f, &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: odeblock.Adjoint{Seminorm: true}})
		flat, fl := gradients(t, f, &odeblock.Block[float64]{Dynamics: f.dyn, Times: times, Solver: solver, Mode: odeblock.Adjoint{FlatNorm: true}})
		t.Logf("%s: backward NFE %d (mixed norm), %d (seminorm), %d (flat)", f.name, fs.Backward.NFE, ss.Backward.NFE, fl.Backward.NFE)
		if f.name == "adamnode" && fl.Backward.NFE == fs.Backward.NFE {
			t.Errorf("adamnode: the flat norm took the mixed norm's %d backward NFE: the option has no effect", fs.Backward.NFE)
		}
		if d := maxRelDiff(flat, ck); d > 1e-3 {
			t.Errorf("%s, flat norm: gradients differ from checkpoint's by %.3g", f.name, d)
		}
		if ss.Backward.NFE > fs.Backward.NFE || f.name == "adamnode" && ss.Backward.NFE == fs.Backward.NFE {
			t.Errorf("%s: seminorm backward NFE %d, mixed norm %d: want no more (and, for adamnode, fewer)", f.name, ss.Backward.NFE, fs.Backward.NFE)
		}
		for name, g := range map[string][]float64{"mixed": full, "seminorm": semi} {
			if d := maxRelDiff(g, ck); d > 1e-3 {
				t.Errorf("%s, %s norm: gradients differ from checkpoint's by %.3g", f.name, name, d)
			}
		}
	}
}

// TestDriftFromZeroState: a state that starts at 0 and is driven by the
// time (h' = cos(t)·w) is reconstructed with an error of the solver's
// tolerance times its size, not of 0: no drift error, and the adjoint's
// gradient of w agrees with the exact one.
func TestDriftFromZeroState(t *testing.T) {
	w := autograd.NewParam("w", tensor.FromSlice([]float64{1.5, -0.5}, 1, 2))
	f := odeblock.FieldFunc([]*autograd.Param[float64]{w}, func(tp *autograd.Tape[float64], tt float64, h autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Add(autograd.MulScalar(h, tp.Scalar(0)), autograd.MulScalar(tp.Param(w), tp.Scalar(math.Cos(tt))))
	})
	autograd.ZeroGrads([]*autograd.Param[float64]{w})
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	b := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: f}, Times: []float64{0, 3}, Solver: odeblock.Options{RTol: 1e-6, ATol: 1e-9}}
	z, err := b.Forward(tp, tp.Input(tensor.New[float64](1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if err := tp.Backward(autograd.Sum(z)); err != nil {
		t.Fatalf("adjoint from a zero state: %v", err)
	}
	// h(3) = w·sin(3): ∂Σh/∂w = sin(3) for each element.
	for _, g := range w.Grad.Data() {
		if math.Abs(g-math.Sin(3)) > 1e-5 {
			t.Errorf("∂L/∂w = %v, want %v", w.Grad.Data(), math.Sin(3))
		}
	}
}

// TestBlockInsidePullback: every mode returns the parameters' gradients
// through the block's node, so a VJP that redirects them (a block inside
// a Pullback, or nested in another block's dynamics) gets them in its
// destinations and Param.Grad stays untouched. Backprop and Checkpoint
// used to write Param.Grad directly.
func TestBlockInsidePullback(t *testing.T) {
	for _, f := range families(9) {
		if f.name != "hbnode" && f.name != "node" {
			continue
		}
		ps := f.params() // the inputs x (and m0), then the dynamics'
		for _, mode := range modes {
			newBlock := func() *odeblock.Block[float64] {
				return &odeblock.Block[float64]{Dynamics: f.dyn, Times: []float64{0, 1}, Mode: mode, Solver: odeblock.Options{RTol: 1e-8, ATol: 1e-8}}
			}
			// The reference: a plain Backward into Param.Grad.
			autograd.ZeroGrads(ps)
			tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
			z, err := newBlock().Forward(tp, f.state(tp))
			if err != nil {
				t.Fatal(err)
			}
			if err := tp.Backward(autograd.Sum(z)); err != nil {
				t.Fatal(err)
			}
			var want []float64
			for _, p := range ps {
				want = append(want, p.Grad.Data()...)
			}
			// The same through a Pullback with the parameters redirected.
			autograd.ZeroGrads(ps)
			dst := autograd.VJPDest[float64]{Params: ps}
			for _, p := range ps {
				dst.ParamGrads = append(dst.ParamGrads, tensor.New[float64](p.Value.Shape()...))
			}
			blk := newBlock()
			var ferr error
			pb := autograd.NewPullback(tensor.EngineFor[float64](tensor.Default()))
			_, err = pb.VJP(func(tp *autograd.Tape[float64], in []autograd.Var[float64]) autograd.Var[float64] {
				z, err := blk.Forward(tp, f.state(tp))
				if err != nil {
					ferr = err
					return autograd.Sum(in[0])
				}
				return autograd.Sum(z)
			}, []*tensor.Tensor[float64]{tensor.New[float64](1)}, tensor.Full[float64](1), dst)
			if err != nil || ferr != nil {
				t.Fatalf("%s, %v: %v %v", f.name, mode, err, ferr)
			}
			var got []float64
			for _, g := range dst.ParamGrads {
				got = append(got, g.Data()...)
			}
			if d := maxRelDiff(got, want); d > 1e-9 {
				t.Errorf("%s, %v: redirected gradients differ from Backward's by %.3g", f.name, mode, d)
			}
			for _, p := range ps {
				for _, g := range p.Grad.Data() {
					if g != 0 {
						t.Fatalf("%s, %v: %s.Grad written during the redirected VJP", f.name, mode, p.Name)
					}
				}
			}
		}
	}
}

// TestAnchoredAdjoint: with AnchorEvery, the adjoint re-anchors its
// reconstruction of the state at every k-th forward step and survives the
// horizons where the plain backsolve fails: AdamNODE over [0, 16] (a step
// size underflow without anchors) and the HBNODE over [0, 40] (a drift of
// 4e10) both give the gradients of a checkpointed solve at 1e-10 to within
// 1e-3, and no worse than Checkpoint at the same tolerance (1e-6):
// AdamNODE 1.0e-4 against 6.9e-4, HBNODE 2e-6 against 2.9e-6.
func TestAnchoredAdjoint(t *testing.T) {
	fa, fh := longHorizonAdam(), dissipativeHBNODE()
	for _, c := range []struct {
		f     family
		times []float64
	}{{fa, []float64{0, 16}}, {fa, []float64{0, 7, 16}}, {fh, []float64{0, 40}}} {
		solver := odeblock.Options{RTol: 1e-6, ATol: 1e-6}
		ck, _ := gradients(t, c.f, &odeblock.Block[float64]{Dynamics: c.f.dyn, Times: c.times, Solver: odeblock.Options{RTol: 1e-10, ATol: 1e-10}, Mode: odeblock.Checkpoint{}})
		ck6, _ := gradients(t, c.f, &odeblock.Block[float64]{Dynamics: c.f.dyn, Times: c.times, Solver: solver, Mode: odeblock.Checkpoint{}})
		t.Logf("%s: checkpoint at 1e-6 against 1e-10: %.2g", c.f.name, maxRelDiff(ck6, ck))
		for _, every := range []int{1, 2} {
			adj, st := gradients(t, c.f, &odeblock.Block[float64]{Dynamics: c.f.dyn, Times: c.times, Solver: solver, Mode: odeblock.Adjoint{AnchorEvery: every}})
			d := maxRelDiff(adj, ck)
			t.Logf("%s over %v, anchors every %d steps: %d forward steps, backward NFE %d, relative difference to checkpoint %.2g",
				c.f.name, c.times, every, st.Forward.Accepted, st.Backward.NFE, d)
			if e6 := maxRelDiff(ck6, ck); d > 1e-3 || d > 2*e6 {
				t.Errorf("%s over %v, AnchorEvery %d: gradients differ from the reference by %.3g (checkpoint at the same tolerance: %.3g)", c.f.name, c.times, every, d, e6)
			}
		}
	}
}

// TestNestedBlocks: a block inside another block's dynamics — the outer
// field is the inner block's flow over [0, 0.4], minus h — in every pair
// of modes, against central differences through z0 and the inner
// dynamics' parameters (which only the inner block reads).
func TestNestedBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 3))
	inner := newMLP(rng, "f", 2, 3, 2, 0.7)
	x := autograd.NewParam("x", tensor.RandN[float64](rng, 0, 1, 2, 2))
	params := append([]*autograd.Param[float64]{x}, inner.Params()...)
	solver := odeblock.Options{RTol: 1e-10, ATol: 1e-10}
	for _, outerMode := range modes {
		for _, innerMode := range modes {
			t.Run(fmt.Sprintf("%v/%v", outerMode, innerMode), func(t *testing.T) {
				in := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: inner}, Times: []float64{0, 0.4}, Mode: innerMode, Solver: solver}
				field := odeblock.FieldFunc(inner.Params(), func(tp *autograd.Tape[float64], _ float64, h autograd.Var[float64]) autograd.Var[float64] {
					z, err := in.Forward(tp, h)
					if err != nil {
						panic(err)
					}
					return autograd.Sub(z, h)
				})
				out := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Times: []float64{0, 0.5, 1}, Mode: outerMode, Solver: solver}
				loss := func(tp *autograd.Tape[float64]) autograd.Var[float64] {
					z, err := out.Trajectory(tp, tp.Param(x))
					if err != nil {
						t.Fatal(err)
					}
					return z
				}
				opt := autograd.GradCheckOptions{Step: 1e-5, AbsTol: 1e-7, RelTol: 1e-5}
				if rep, err := autograd.CheckGradients(loss, params, opt); err != nil {
					t.Fatalf("%v\n%v", err, rep)
				}
			})
		}
	}
}

// thrownBall returns the ball of the event tests: its initial state
// (h0, v0) = (2, 1.5), a learnable gravity γ = 9.81, and the field
// h' = v, v' = −γ.
func thrownBall() (z0, gamma *autograd.Param[float64], field odeblock.Field[float64]) {
	z0 = autograd.NewParam("z0", tensor.FromSlice([]float64{2, 1.5}, 1, 2))
	gamma = autograd.NewParam("gamma", tensor.FromSlice([]float64{9.81}, 1))
	w := tensor.FromSlice([]float64{0, 1, 0, 0}, 2, 2) // (h, v) ↦ (v, 0)
	field = odeblock.FieldFunc([]*autograd.Param[float64]{gamma}, func(tp *autograd.Tape[float64], _ float64, z autograd.Var[float64]) autograd.Var[float64] {
		acc := autograd.Concat(0, tp.Const(tensor.New[float64](1)), autograd.Neg(tp.Param(gamma)))
		return autograd.Linear(z, tp.Const(w), acc)
	})
	return z0, gamma, field
}

// TestForwardEvent: the ball thrown from (h0, v0) under a learnable
// gravity γ — h' = v, v' = −γ — stopped when h falls through 0: the event
// time equals the exact impact time (v0 + √(v0² + 2γh0))/γ to 1e-8, and
// the gradients of a loss of the event time and the impact velocity with
// respect to h0, v0 and γ match central differences in every mode.
func TestForwardEvent(t *testing.T) {
	z0, gamma, field := thrownBall()
	height := func(tp *autograd.Tape[float64], _ float64, z autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Narrow(autograd.Reshape(z, 2), 0, 0, 1)
	}
	for _, mode := range append(modes, odeblock.Interpolated{}, odeblock.Interpolated{Budget: 2}) {
		t.Run(mode.String(), func(t *testing.T) {
			b := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Times: []float64{0, 10}, Mode: mode,
				Solver: odeblock.Options{RTol: 1e-10, ATol: 1e-10}}
			loss := func(tp *autograd.Tape[float64]) (autograd.Var[float64], error) {
				te, ze, err := b.ForwardEvent(tp, tp.Param(z0), height, -1)
				if err != nil {
					return autograd.Var[float64]{}, err
				}
				v := autograd.Narrow(autograd.Reshape(ze, 2), 0, 1, 1)
				return autograd.Add(te, autograd.Scale(v, 0.1)), nil
			}
			tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
			te, _, err := b.ForwardEvent(tp, tp.Param(z0), height, -1)
			if err != nil {
				t.Fatal(err)
			}
			h0, v0, g := 2.0, 1.5, 9.81
			if want := (v0 + math.Sqrt(v0*v0+2*g*h0)) / g; math.Abs(float64(te.Item())-want) > 1e-8 {
				t.Errorf("event time %v, exact %v", te.Item(), want)
			}
			opt := autograd.GradCheckOptions{Step: 1e-5, AbsTol: 1e-6, RelTol: 1e-5}
			if rep, err := autograd.CheckGradients(loss, []*autograd.Param[float64]{z0, gamma}, opt); err != nil {
				t.Fatalf("%v\n%v", err, rep)
			}
		})
	}
}

// TestStiffBlockAdjoint: a block on a stiff linear field z' = z·Wᵀ (one
// eigenvalue near λ) with rosenbrock23, rodas4 and bdf: in the Adjoint mode
// (whose backward solve is stiff too, and uses the same method) the
// gradients match central differences — or, where the reverse-time
// reconstruction of the stiff state cannot be kept within MaxDrift even
// step by step (rodas4 and bdf at λ = −1000: the reverse-time problem
// grows as e^{1000·t}), the backward pass is an error saying so (a drift,
// or a step size underflow), never wrong gradients. (The Interpolated mode,
// which reconstructs nothing, handles them: TestInterpolatedStiff.)
func TestStiffBlockAdjoint(t *testing.T) {
	for _, c := range []struct {
		method   string
		lambda   float64
		mayDrift bool
	}{{"rosenbrock23", -1000, false}, {"rodas4", -100, false}, {"rodas4", -1000, true}, {"bdf", -100, false}, {"bdf", -1000, true}} {
		w := autograd.NewParam("w", tensor.FromSlice([]float64{c.lambda, 1, 0.5, -1}, 2, 2))
		x := autograd.NewParam("x", tensor.FromSlice([]float64{1, 2}, 1, 2))
		field := odeblock.FieldFunc([]*autograd.Param[float64]{w}, func(tp *autograd.Tape[float64], _ float64, z autograd.Var[float64]) autograd.Var[float64] {
			return autograd.Linear(z, tp.Param(w), autograd.Var[float64]{})
		})
		solver := odeblock.Options{Method: c.method, RTol: 1e-9, ATol: 1e-9, StepControl: odeblock.StepControl{MaxSteps: 100000}}
		b := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Times: []float64{0, 0.5, 2}, Solver: solver}
		loss := func(tp *autograd.Tape[float64]) (autograd.Var[float64], error) {
			return b.Trajectory(tp, tp.Param(x))
		}
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
		z, err := loss(tp)
		if err != nil {
			t.Fatalf("%s λ=%g: %v", c.method, c.lambda, err)
		}
		if err := tp.Backward(autograd.Sum(z)); err != nil {
			if c.mayDrift && (errors.Is(err, odeblock.ErrAdjointDrift) || errors.Is(err, odeblock.ErrStepUnderflow)) {
				t.Logf("%s λ=%g: %v", c.method, c.lambda, err)
				continue
			}
			t.Fatalf("%s λ=%g: %v", c.method, c.lambda, err)
		}
		opt := autograd.GradCheckOptions{Step: 1e-6, AbsTol: 1e-5, RelTol: 1e-4}
		if rep, err := autograd.CheckGradients(loss, []*autograd.Param[float64]{w, x}, opt); err != nil {
			t.Fatalf("%s λ=%g: %v\n%v", c.method, c.lambda, err, rep)
		}
		st := b.Stats()
		t.Logf("%s λ=%g: forward %+v, backward %+v", c.method, c.lambda, st.Forward, st.Backward)
	}
}

// TestStepsOnlyBlockAdjoint: the fixed-step Adams and implicit RK methods
// in a block, in the Adjoint and Interpolated modes, against central
// differences (to the methods' discretisation error); Checkpoint runs as
// Interpolated with them (the same numbers), Recursive as Interpolated
// with its Budget (the same numbers to rounding, fewer states kept).
func TestStepsOnlyBlockAdjoint(t *testing.T) {
	f := families(6)[0] // node
	for _, m := range []string{"explicit_adams", "implicit_adams", "radauIIA3", "gl4", "trbdf2"} {
		solver := odeblock.Options{Method: m, Step: 1.0 / 128}
		for _, mode := range []odeblock.GradMode{odeblock.Adjoint{}, odeblock.Interpolated{}} {
			b := &odeblock.Block[float64]{Dynamics: f.dyn, Times: []float64{0, 0.5, 1}, Solver: solver, Mode: mode}
			opt := autograd.GradCheckOptions{Step: 1e-6, AbsTol: 1e-6, RelTol: 1e-4} // the adjoint of a 2nd-order fixed step
			if rep, err := autograd.CheckGradients(blockFunc(t, f, b), f.params(), opt); err != nil {
				t.Fatalf("%s, %v: %v\n%v", m, mode, err, rep)
			}
		}
		ip, _ := gradients(t, f, &odeblock.Block[float64]{Dynamics: f.dyn, Times: []float64{0, 0.5, 1}, Solver: solver, Mode: odeblock.Interpolated{}})
		ck, _ := gradients(t, f, &odeblock.Block[float64]{Dynamics: f.dyn, Times: []float64{0, 0.5, 1}, Solver: solver, Mode: odeblock.Checkpoint{}})
		if d := maxRelDiff(ck, ip); d != 0 {
			t.Errorf("%s: Checkpoint differs from Interpolated by %.3g", m, d)
		}
		rc, st := gradients(t, f, &odeblock.Block[float64]{Dynamics: f.dyn, Times: []float64{0, 0.5, 1}, Solver: solver, Mode: odeblock.Recursive{Budget: 3}})
		if d := maxRelDiff(rc, ip); d > 1e-9 || st.Stored >= st.Forward.Accepted {
			t.Errorf("%s: Recursive{Budget: 3} differs from Interpolated by %.3g, keeping %d states for %d steps", m, d, st.Stored, st.Forward.Accepted)
		}
	}
}

// ownAdjointer is a user's Adjointer: AdamNODE's, delegated, refusing a
// nil dg (the package hands nil only to its own families).
type ownAdjointer struct {
	*odeblock.AdamNODE[float64]
	calls int
}

func (o *ownAdjointer) EvalAdjoint(pb *autograd.Pullback[float64], t float64, z, a, dz, da *tensor.Tensor[float64], dg []*tensor.Tensor[float64]) error {
	if dg == nil {
		panic("EvalAdjoint of a user's Adjointer got a nil dg")
	}
	o.calls++
	return o.AdamNODE.EvalAdjoint(pb, t, z, a, dz, da, dg)
}

// TestAdjointSkipsUnweightedGradients: the adjoint's backward solve skips
// the parameters' gradients at dopri5's second stage (Options.Quadrature)
// for the package's families and the generic VJP; a user's Adjointer gets
// every buffer. All three give the same gradients, the first two to the bit.
func TestAdjointSkipsUnweightedGradients(t *testing.T) {
	var f family
	for _, g := range families(5) {
		if g.name == "adamnode" {
			f = g
		}
	}
	adam := f.dyn.(*odeblock.AdamNODE[float64])
	grads := func(dyn odeblock.Dynamics[float64], mode odeblock.GradMode) [][]float64 {
		b := &odeblock.Block[float64]{Dynamics: dyn, Times: []float64{0, 1}, Mode: mode, Solver: odeblock.Options{RTol: 1e-8, ATol: 1e-8}}
		for _, p := range f.params() {
			p.ZeroGrad()
		}
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
		z, err := b.Forward(tp, f.state(tp))
		if err != nil {
			t.Fatal(err)
		}
		if err := tp.Backward(autograd.Sum(autograd.Square(z))); err != nil {
			t.Fatal(err)
		}
		var out [][]float64
		for _, p := range f.params() {
			out = append(out, slices.Clone(p.Grad.Data()))
		}
		return out
	}
	own := &ownAdjointer{AdamNODE: adam}
	ref := grads(adam, odeblock.Adjoint{})
	for name, got := range map[string][][]float64{
		"own Adjointer": grads(own, odeblock.Adjoint{}),
		"generic":       grads(adam, odeblock.Adjoint{Generic: true}),
	} {
		for i := range ref {
			for j, v := range ref[i] {
				d := math.Abs(got[i][j] - v)
				if (name == "own Adjointer" && d != 0) || d > 1e-9*(1+math.Abs(v)) {
					t.Fatalf("%s: gradient %d[%d] = %v, the family's %v", name, i, j, got[i][j], v)
				}
			}
		}
	}
	if own.calls == 0 {
		t.Fatal("the user's Adjointer was not called")
	}
}
