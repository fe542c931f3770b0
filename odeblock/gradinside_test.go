package odeblock_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// hamiltonian is a Hamiltonian neural network's field (Greydanus et al.
// 2019) on z = (q, p) [B, 2]: H(z) = Σ_rows w2·tanh(W1 z + b1), and
// z' = J·∇H = (∂H/∂p, −∂H/∂q), its gradient taken with autograd.Grad as a
// PyTorch user writes it (torch.autograd.grad with create_graph=True).
type hamiltonian struct {
	w1, b1, w2  *autograd.Param[float64]
	createGraph bool
}

func newHamiltonian(seed uint64, hidden int, createGraph bool) *hamiltonian {
	rng := rand.New(rand.NewPCG(seed, 3))
	p := func(n string, s ...int) *autograd.Param[float64] {
		return autograd.NewParam("H."+n, tensor.RandN[float64](rng, 0, 0.7, s...))
	}
	return &hamiltonian{w1: p("w1", hidden, 2), b1: p("b1", hidden), w2: p("w2", 1, hidden), createGraph: createGraph}
}

func (h *hamiltonian) energy(tp *autograd.Tape[float64], z autograd.Var[float64]) autograd.Var[float64] {
	a := autograd.Tanh(autograd.Linear(z, tp.Param(h.w1), tp.Param(h.b1)))
	return autograd.Sum(autograd.Linear(a, tp.Param(h.w2), autograd.Var[float64]{}))
}

func (h *hamiltonian) ForwardT(tp *autograd.Tape[float64], _ float64, z autograd.Var[float64]) autograd.Var[float64] {
	gs, err := autograd.Grad([]autograd.Var[float64]{h.energy(tp, z)}, []autograd.Var[float64]{z}, autograd.GradOptions[float64]{CreateGraph: h.createGraph})
	if err != nil {
		panic(err)
	}
	g := gs.Inputs[0]
	return autograd.Concat(1, autograd.Narrow(g, 1, 1, 1), autograd.Neg(autograd.Narrow(g, 1, 0, 1)))
}

func (h *hamiltonian) Params() []*autograd.Param[float64] {
	return []*autograd.Param[float64]{h.w1, h.b1, h.w2}
}

// insideField is a field on z [B, 2] that differentiates part of itself
// with one of autograd's derivatives: a Hamiltonian network's J·∇H by
// Grad (with or without CreateGraph), GradOf or HVP, or an MLP g(z) plus a
// derivative of g: a VJP, a JVP, or −tr(∂g/∂z) (exact or Hutchinson's) as
// a third column's integrand is not a field of z [B, 2], so the traces
// weight the state by them instead.
type insideField struct {
	h    *hamiltonian
	kind string
}

func (f insideField) Params() []*autograd.Param[float64] { return f.h.Params() }

func (f insideField) ForwardT(tp *autograd.Tape[float64], t float64, z autograd.Var[float64]) autograd.Var[float64] {
	h := f.h
	energy := func(z autograd.Var[float64]) autograd.Var[float64] { return h.energy(tp, z) }
	g := func(z autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Tanh(autograd.Linear(autograd.Linear(autograd.Tanh(autograd.Linear(z, tp.Param(h.w1), tp.Param(h.b1))), tp.Param(h.w2), autograd.Var[float64]{}), tp.Const(tensor.FromSlice([]float64{1, -0.5}, 2, 1)), autograd.Var[float64]{}))
	}
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	symplectic := func(d autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Concat(1, autograd.Narrow(d, 1, 1, 1), autograd.Neg(autograd.Narrow(d, 1, 0, 1)))
	}
	switch f.kind {
	case "Grad", "Grad without CreateGraph":
		return h.ForwardT(tp, t, z)
	case "GradOf":
		d, err := autograd.GradOf(energy, z)
		must(err)
		return symplectic(d)
	case "HVP":
		d, hv, err := autograd.HVP(energy, z, autograd.Scale(z, 0.3))
		must(err)
		return symplectic(autograd.Add(d, hv))
	case "VJPOf":
		y, vjp, err := autograd.VJPOf(g, z, autograd.Scale(z, 0.5))
		must(err)
		return autograd.Add(y, vjp)
	case "JVP":
		y, jv, err := autograd.JVP(g, z, autograd.Scale(z, 0.5))
		must(err)
		return autograd.Add(y, jv)
	case "TraceExact", "TraceHutchinson":
		var y, tr autograd.Var[float64]
		var err error
		if f.kind == "TraceExact" {
			y, tr, err = autograd.TraceExact(g, z)
		} else {
			probe := tp.Const(tensor.FromSlice([]float64{1, -1, -1, 1}, 2, 2))
			y, tr, err = autograd.TraceHutchinson(g, z, probe)
		}
		must(err)
		return autograd.Sub(y, autograd.Mul(z, autograd.Scale(tr, 0.2)))
	}
	panic("unknown kind " + f.kind)
}

// TestGradInsideField: a field that differentiates part of itself — with
// Grad (with CreateGraph or without), GradOf, VJPOf, JVP, HVP or a trace —
// trains in every gradient mode: central differences through z0 and the
// field's parameters, and the modes' gradients agree; and it rolls out
// without gradients, giving the recorded solve's values.
func TestGradInsideField(t *testing.T) {
	z0 := autograd.NewParam("z0", tensor.FromSlice([]float64{0.4, -0.3, -0.2, 0.6}, 2, 2))
	for _, kind := range []string{"Grad", "Grad without CreateGraph", "GradOf", "HVP", "VJPOf", "JVP", "TraceExact", "TraceHutchinson"} {
		h := newHamiltonian(1, 4, kind != "Grad without CreateGraph")
		params := append([]*autograd.Param[float64]{z0}, h.Params()...)
		dyn := &odeblock.NODE[float64]{F: insideField{h: h, kind: kind}}
		fam := family{dyn: dyn, state: func(tp *autograd.Tape[float64]) autograd.Var[float64] { return tp.Param(z0) }, params: func() []*autograd.Param[float64] { return params }}
		var ref []float64
		for _, mode := range modes {
			t.Run(fmt.Sprintf("%s/%v", kind, mode), func(t *testing.T) {
				b := &odeblock.Block[float64]{Dynamics: dyn, Times: []float64{0, 0.4, 1}, Mode: mode, Solver: odeblock.Options{RTol: 1e-11, ATol: 1e-11}}
				tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
				tp.SetNoGrad(true)
				roll, err := b.Trajectory(tp, tp.Const(z0.Value))
				if err != nil {
					t.Fatalf("no-grad rollout: %v", err)
				}
				rolled := append([]float64(nil), roll.Value().Data()...)
				f := blockFunc(t, fam, b)
				tp = autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
				if d := maxRelDiff(rolled, f(tp).Value().Data()); d > 1e-12 {
					t.Errorf("the no-grad rollout differs from the recorded solve by %.3g", d)
				}
				rep, err := autograd.CheckGradients(f, params, autograd.GradCheckOptions{Step: 1e-5, AbsTol: 1e-7, RelTol: 1e-5})
				if err != nil {
					t.Fatalf("%v\n%v", err, rep)
				}
				g, _ := gradients(t, fam, b)
				if ref == nil {
					ref = g
				} else if d := maxRelDiff(g, ref); d > 1e-7 {
					t.Errorf("gradients differ from the adjoint's by %.3g", d)
				}
			})
		}
	}
}
