package cuda

import (
	"github.com/adamnode/adamnode/tensor"
)

// The families' right-hand sides on the engine's tensors: odeblock records
// AdamNODE's and HBNODE's F(z) as one node each, and on an engine whose
// Elementwise has these methods (found by their names and signatures:
// cuda does not import odeblock) forms it, and its backward, in a few
// kernels over the state's device copy instead of a dozen ops. The state
// z, the result and its gradient hold the parts (h, m[, v]) stacked; g =
// f(h, t) is one part long.

// adamParamsOf returns AdamParams for odeblock's operands.
func adamParamsOf[T tensor.Float](a1, a2 float64, eps T, softplus bool) AdamParams[T] {
	p := AdamParams[T]{A1: a1, A2: a2, Eps: eps, Scale: AdamScaleSqrt}
	if softplus {
		p.Scale = AdamScaleSoftplus
	}
	return p
}

// mustParts panics with a *tensor.ShapeError unless every tensor of ts
// has parts·n elements, n = g's.
func mustParts[T tensor.Float](op string, parts int, g *tensor.Tensor[T], ts ...*tensor.Tensor[T]) int {
	n := g.Len()
	for _, t := range ts {
		if t.Len() != parts*n {
			panic(shapeError(op, "a state of shape %v for f(h) of shape %v: want %d parts of its length", t.Shape(), g.Shape(), parts))
		}
	}
	return n
}

// AdamRHS sets out = AdamNODE's F(z) = (−m/s(v), a1·(−g − m), a2·(g² −
// v)) for z = (h, m, v) with the AdamRHS kernel (a1 = σ(r1), a2 = σ(r2);
// s = √softplus(v) + ε when softplus, else √(v + ε)).
func (w elementwise[T]) AdamRHS(o, z, g *tensor.Tensor[T], a1, a2 float64, eps T, softplus bool) {
	n := mustParts("AdamRHS", 3, g, o, z)
	if n == 0 {
		return
	}
	b, k := w.b, w.k
	b.lock()
	defer b.unlock()
	b.tick()
	dz, dg := dev(in(b, z), z), dev(in(b, g), g)
	do := dev(out(b, o, false), o)
	p := adamParamsOf(a1, a2, eps, softplus)
	must(AdamRHS(k, p, do.Slice(0, n), do.Slice(n, 2*n), do.Slice(2*n, 3*n), dg, dz.Slice(n, 2*n), dz.Slice(2*n, 3*n)))
	produced(b, o)
}

// AdamRHSBackward sets, for the cotangent c of AdamRHS's out, gz = (0,
// ∂/∂m, ∂/∂v), gg = ∂/∂g and gr = (∂/∂r1, ∂/∂r2) (2 elements) with the
// AdamRHSBackward kernel.
func (w elementwise[T]) AdamRHSBackward(gz, gg, gr, z, g, c *tensor.Tensor[T], a1, a2 float64, eps T, softplus bool) {
	n := mustParts("AdamRHSBackward", 3, g, gz, z, c)
	mustParts("AdamRHSBackward", 1, g, gg)
	if gr.Len() != 2 {
		panic(shapeError("AdamRHSBackward", "a gradient of r1 and r2 of shape %v, not 2 elements", gr.Shape()))
	}
	b, k := w.b, w.k
	b.lock()
	defer b.unlock()
	b.tick()
	dz, dg, dc := dev(in(b, z), z), dev(in(b, g), g), dev(in(b, c), c)
	dgz, dgg, dgr := dev(out(b, gz, false), gz), dev(out(b, gg, false), gg), dev(out(b, gr, false), gr)
	if n == 0 {
		must(Fill(k, dgr, 0))
		produced(b, gr)
		return
	}
	p := adamParamsOf(a1, a2, eps, softplus)
	must(Fill(k, dgz.Slice(0, n), 0))
	must(AdamRHSBackward(k, p, dgg, dgz.Slice(n, 2*n), dgz.Slice(2*n, 3*n), dgr, dg, dz.Slice(n, 2*n), dz.Slice(2*n, 3*n),
		dc.Slice(0, n), dc.Slice(n, 2*n), dc.Slice(2*n, 3*n)))
	produced(b, gz)
	produced(b, gg)
	produced(b, gr)
}

// HBRHS sets out = HBNODE's F(z) = (−m, g − γ·m) for z = (h, m), with two
// linear combinations.
func (w elementwise[T]) HBRHS(o, z, g *tensor.Tensor[T], gamma float64) {
	n := mustParts("HBRHS", 2, g, o, z)
	if n == 0 {
		return
	}
	b, k := w.b, w.k
	b.lock()
	defer b.unlock()
	b.tick()
	dz, dg := dev(in(b, z), z), dev(in(b, g), g)
	do := dev(out(b, o, false), o)
	m := dz.Slice(n, 2*n)
	must(LinComb(k, do.Slice(0, n), Buffer[T]{}, []T{-1}, []Buffer[T]{m}))
	must(LinComb(k, do.Slice(n, 2*n), dg, []T{T(-gamma)}, []Buffer[T]{m}))
	produced(b, o)
}

// HBRHSBackward sets, for the cotangent c = (c_h, c_m) of HBRHS's out,
// gz = (0, −c_h − γ·c_m), gg = c_m and gr[0] = −γ(1−γ)·Σ c_m ⊙ m (the sum
// formed in float64 and rounded to T, then scaled in T).
func (w elementwise[T]) HBRHSBackward(gz, gg, gr, z, c *tensor.Tensor[T], gamma float64) {
	n := mustParts("HBRHSBackward", 2, gg, gz, z, c)
	if gr.Len() != 1 {
		panic(shapeError("HBRHSBackward", "a gradient of γ_raw of shape %v, not 1 element", gr.Shape()))
	}
	b, k := w.b, w.k
	b.lock()
	defer b.unlock()
	b.tick()
	dz, dc := dev(in(b, z), z), dev(in(b, c), c)
	dgz, dgg, dgr := dev(out(b, gz, false), gz), dev(out(b, gg, false), gg), dev(out(b, gr, false), gr)
	if n == 0 {
		must(Fill(k, dgr, 0))
		produced(b, gr)
		return
	}
	cm, m := dc.Slice(n, 2*n), dz.Slice(n, 2*n)
	must(Fill(k, dgz.Slice(0, n), 0))
	must(LinComb(k, dgz.Slice(n, 2*n), Buffer[T]{}, []T{-1, T(-gamma)}, []Buffer[T]{dc.Slice(0, n), cm}))
	must(Copy(k, dgg, cm))
	sum := Buffer[T]{ptr: k.normSlot(0), n: 1}
	must(Dot(k, sum, cm, m))
	must(LinComb(k, dgr, Buffer[T]{}, []T{T(-gamma * (1 - gamma))}, []Buffer[T]{sum}))
	produced(b, gz)
	produced(b, gg)
	produced(b, gr)
}

// GHBRHS sets out = GHBNODE's F(z) = (tanh(−m), g − γ·m + ξ·h) for z =
// (h, m) (φ = tanh), with linear combinations and the tanh map.
func (w elementwise[T]) GHBRHS(o, z, g *tensor.Tensor[T], gamma, xi float64) {
	n := mustParts("GHBRHS", 2, g, o, z)
	if n == 0 {
		return
	}
	b, k := w.b, w.k
	b.lock()
	defer b.unlock()
	b.tick()
	dz, dg := dev(in(b, z), z), dev(in(b, g), g)
	do := dev(out(b, o, false), o)
	h, m := dz.Slice(0, n), dz.Slice(n, 2*n)
	dh := do.Slice(0, n)
	must(LinComb(k, dh, Buffer[T]{}, []T{-1}, []Buffer[T]{m}))
	must(Map(k, Tanh, dh, dh))
	must(LinComb(k, do.Slice(n, 2*n), dg, []T{T(-gamma), T(xi)}, []Buffer[T]{m, h}))
	produced(b, o)
}

// GHBRHSBackward sets, for the cotangent c = (c_h, c_m) of GHBRHS's
// result out, gz = (ξ·c_m, −c_h ⊙ (1 − out_h²) − γ·c_m), gg = c_m and gr =
// (−γ(1−γ)·Σ c_m ⊙ m, dxi·Σ c_m ⊙ h) (2 elements; dxi = σ(ξ_raw), ξ's
// derivative; the sums formed in float64, rounded to T, then scaled).
func (w elementwise[T]) GHBRHSBackward(gz, gg, gr, z, o, c *tensor.Tensor[T], gamma, xi, dxi float64) {
	n := mustParts("GHBRHSBackward", 2, gg, gz, z, o, c)
	if gr.Len() != 2 {
		panic(shapeError("GHBRHSBackward", "a gradient of γ_raw and ξ_raw of shape %v, not 2 elements", gr.Shape()))
	}
	b, k := w.b, w.k
	b.lock()
	defer b.unlock()
	b.tick()
	dz, do, dc := dev(in(b, z), z), dev(in(b, o), o), dev(in(b, c), c)
	dgz, dgg, dgr := dev(out(b, gz, false), gz), dev(out(b, gg, false), gg), dev(out(b, gr, false), gr)
	if n == 0 {
		must(Fill(k, dgr, 0))
		produced(b, gr)
		return
	}
	h, m, ch, cm := dz.Slice(0, n), dz.Slice(n, 2*n), dc.Slice(0, n), dc.Slice(n, 2*n)
	gm := dgz.Slice(n, 2*n)
	must(LinComb(k, dgz.Slice(0, n), Buffer[T]{}, []T{T(xi)}, []Buffer[T]{cm}))
	must(MapBackward(k, Tanh, gm, ch, do.Slice(0, n), false))
	must(Map(k, Neg, gm, gm))
	must(LinComb(k, gm, gm, []T{T(-gamma)}, []Buffer[T]{cm}))
	must(Copy(k, dgg, cm))
	sum := Buffer[T]{ptr: k.normSlot(0), n: 1}
	must(Dot(k, sum, cm, m))
	must(LinComb(k, dgr.Slice(0, 1), Buffer[T]{}, []T{T(-gamma * (1 - gamma))}, []Buffer[T]{sum}))
	must(Dot(k, sum, cm, h))
	must(LinComb(k, dgr.Slice(1, 2), Buffer[T]{}, []T{T(dxi)}, []Buffer[T]{sum}))
	produced(b, gz)
	produced(b, gg)
	produced(b, gr)
}
