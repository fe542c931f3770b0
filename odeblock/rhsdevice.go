package odeblock

import (
	"fmt"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// The families' fused right-hand sides on a device. An engine whose
// Elementwise also has the methods below (package cuda's; they are found
// by their method sets, so the engine's package need not import this one)
// forms AdamNODE's and HBNODE's F(z) and its backward in a few kernels
// over the state's device copy, as the CPU's fused nodes (adamRHS, hbRHS)
// do in host memory: one node on the tape instead of a dozen ops. Other
// device engines record them op by op (adamRHSByOps, hbRHSByOps). The
// backward in ops (for gradients of gradients) is the same as the CPU
// node's.

// adamRHSDevice has AdamNODE's right-hand side as fused kernels. z, out
// and gz hold (h, m, v) stacked, g = f(h, t) a third of their length, with
// a1 = σ(r1), a2 = σ(r2) in float64, eps = ε, and softplus for
// ScaleSoftplus.
type adamRHSDevice[T tensor.Float] interface {
	// AdamRHS sets out = F(z) = (−m/s(v), a1·(−g − m), a2·(g² − v)).
	AdamRHS(out, z, g *tensor.Tensor[T], a1, a2 float64, eps T, softplus bool)
	// AdamRHSBackward sets, for the cotangent c of out, gz = (0, ∂/∂m,
	// ∂/∂v), gg = ∂/∂g and gr = (∂/∂r1, ∂/∂r2), as adamRHS's backward.
	AdamRHSBackward(gz, gg, gr, z, g, c *tensor.Tensor[T], a1, a2 float64, eps T, softplus bool)
}

// hbRHSDevice has HBNODE's right-hand side as fused kernels: z, out and gz
// hold (h, m), g is one part long, γ = σ(γ_raw) in float64.
type hbRHSDevice[T tensor.Float] interface {
	// HBRHS sets out = F(z) = (−m, g − γ·m).
	HBRHS(out, z, g *tensor.Tensor[T], gamma float64)
	// HBRHSBackward sets, for the cotangent c = (c_h, c_m) of out, gz =
	// (0, −c_h − γ·c_m), gg = c_m and gr[0] = −γ(1−γ)·Σ c_m ⊙ m.
	HBRHSBackward(gz, gg, gr, z, c *tensor.Tensor[T], gamma float64)
}

// fusedOn returns tp's engine's Elementwise as an I, when it is one.
func fusedOn[I any, T tensor.Float](tp *autograd.Tape[T]) (I, bool) {
	f, ok := tensor.ElementwiseOf(tp.Engine()).(I)
	return f, ok
}

// scalarOf returns the one element of a parameter's value, read (without
// counting a write, which would send it to the device again).
func scalarOf[T tensor.Float](v autograd.Var[T]) float64 {
	return float64(v.Value().ReadData()[0])
}

// mustParts panics with the family's *tensor.ShapeError unless z has
// parts times g's elements.
func mustParts[T tensor.Float](family string, parts int, z, g *tensor.Tensor[T]) int {
	n := g.Len()
	if z.Len() != parts*n {
		panic(&tensor.ShapeError{Op: "odeblock." + family, Msg: fmt.Sprintf("f(h) of shape %v for a state of shape %v", g.Shape(), z.Shape())})
	}
	return n
}

// adamRHSOn is adamRHS with the device's fused kernels ad.
func (d *AdamNODE[T]) adamRHSOn(tp *autograd.Tape[T], ad adamRHSDevice[T], z, g, r1, r2 autograd.Var[T]) autograd.Var[T] {
	zv, gv := z.Value(), g.Value()
	mustParts("AdamNODE", 3, zv, gv)
	a1, a2 := tensor.SigmoidOf(scalarOf(r1)), tensor.SigmoidOf(scalarOf(r2))
	eps, softplus := d.eps(), d.S == ScaleSoftplus
	out := tp.Scratch(zv.Shape()...)
	ad.AdamRHS(out, zv, gv, a1, a2, eps, softplus)
	return autograd.CustomDiff("AdamNODE.F", out, func(c *tensor.Tensor[T]) ([]*tensor.Tensor[T], error) {
		gz, gg, gr := tp.Scratch(zv.Shape()...), tp.Scratch(gv.Shape()...), tp.Scratch(2)
		ad.AdamRHSBackward(gz, gg, gr, zv, gv, c, a1, a2, eps, softplus)
		return []*tensor.Tensor[T]{gz, gg, gr.Slice(0, 1), gr.Slice(1, 2)}, nil
	}, d.opsBackward(), z, g, r1, r2)
}

// hbRHSOn is hbRHS with the device's fused kernels hd.
func hbRHSOn[T tensor.Float](tp *autograd.Tape[T], hd hbRHSDevice[T], z, g, gammaRaw autograd.Var[T], opsBack func(gy autograd.Var[T], in []autograd.Var[T]) ([]autograd.Var[T], error)) autograd.Var[T] {
	zv, gv := z.Value(), g.Value()
	mustParts("HBNODE", 2, zv, gv)
	gamma := tensor.SigmoidOf(scalarOf(gammaRaw))
	out := tp.Scratch(zv.Shape()...)
	hd.HBRHS(out, zv, gv, gamma)
	return autograd.CustomDiff("HBNODE.F", out, func(c *tensor.Tensor[T]) ([]*tensor.Tensor[T], error) {
		gz, gg, gr := tp.Scratch(zv.Shape()...), tp.Scratch(gv.Shape()...), tp.Scratch(1)
		hd.HBRHSBackward(gz, gg, gr, zv, c, gamma)
		return []*tensor.Tensor[T]{gz, gg, gr}, nil
	}, opsBack, z, g, gammaRaw)
}
