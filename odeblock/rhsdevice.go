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

// ghbRHSDevice has GHBNODE's right-hand side with φ = tanh as fused
// kernels: z, out and gz hold (h, m), g is one part long, γ = σ(γ_raw) and
// ξ = softplus(ξ_raw) in float64.
type ghbRHSDevice[T tensor.Float] interface {
	// GHBRHS sets out = F(z) = (tanh(−m), g − γ·m + ξ·h).
	GHBRHS(out, z, g *tensor.Tensor[T], gamma, xi float64)
	// GHBRHSBackward sets, for the cotangent c = (c_h, c_m) of out (whose
	// value is out), gz = (ξ·c_m, −c_h ⊙ (1 − out_h²) − γ·c_m), gg = c_m
	// and gr = (−γ(1−γ)·Σ c_m ⊙ m, dxi·Σ c_m ⊙ h), dxi = σ(ξ_raw).
	GHBRHSBackward(gz, gg, gr, z, out, c *tensor.Tensor[T], gamma, xi, dxi float64)
}

// fusedOn returns tp's engine's Elementwise as an I, when it is one.
func fusedOn[I any, T tensor.Float](tp *autograd.Tape[T]) (I, bool) {
	f, ok := tensor.DeviceElementwise(tp.Engine()).(I)
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

// ghbRHSOn records GHBNODE's right-hand side (φ = tanh) as one node with
// the device's fused kernels gd; its backward in ops is rhsByOps's.
func (d *GHBNODE[T]) ghbRHSOn(tp *autograd.Tape[T], gd ghbRHSDevice[T], z, g, gammaRaw, xiRaw autograd.Var[T]) autograd.Var[T] {
	zv, gv := z.Value(), g.Value()
	mustParts("GHBNODE", 2, zv, gv)
	gamma := tensor.SigmoidOf(scalarOf(gammaRaw))
	xr := scalarOf(xiRaw)
	xi, dxi := tensor.SoftplusOf(xr), tensor.SigmoidOf(xr)
	out := tp.Scratch(zv.Shape()...)
	gd.GHBRHS(out, zv, gv, gamma, xi)
	if d.opsBack == nil {
		byOps := func(in []autograd.Var[T]) autograd.Var[T] {
			p := splitParts(in[0], 2)
			return d.rhsByOps(p[0], p[1], func() autograd.Var[T] { return in[1] }, in[2], in[3])
		}
		d.opsBack = func(gy autograd.Var[T], in []autograd.Var[T]) ([]autograd.Var[T], error) {
			return autograd.OpsVJP(byOps, in, gy)
		}
	}
	return autograd.CustomDiff("GHBNODE.F", out, func(c *tensor.Tensor[T]) ([]*tensor.Tensor[T], error) {
		gz, gg, gr := tp.Scratch(zv.Shape()...), tp.Scratch(gv.Shape()...), tp.Scratch(2)
		gd.GHBRHSBackward(gz, gg, gr, zv, out, c, gamma, xi, dxi)
		return []*tensor.Tensor[T]{gz, gg, gr.Slice(0, 1), gr.Slice(1, 2)}, nil
	}, d.opsBack, z, g, gammaRaw, xiRaw)
}
