package odeblock

import (
	"fmt"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// The families' right-hand sides as single tape nodes. Recorded op by op,
// AdamNODE's F(z) = (−m/s(v), a1·(−g − m), a2·(g² − v)) is about fifteen
// nodes, each a pass over a part of the state forward and another backward;
// for MLP fields, whose GEMMs are small, those passes cost as much as the
// field. Each node here takes one pass forward and one backward, with the
// derivatives written out.

// adamRHS records AdamNODE's right-hand side from the state z = (h, m, v)
// and g = f(h, t): one node with inputs z, g, r1 and r2 (a1 = σ(r1),
// a2 = σ(r2)). Its backward, for the cotangent (c_h, c_m, c_v), is
//
//	∂/∂g  = −a1·c_m + 2·a2·g ⊙ c_v
//	∂/∂h  = 0
//	∂/∂m  = −c_h / s − a1·c_m
//	∂/∂v  = c_h ⊙ m ⊙ s'(v) / s² − a2·c_v
//	∂/∂r1 = a1(1−a1)·Σ c_m ⊙ (−g − m)
//	∂/∂r2 = a2(1−a2)·Σ c_v ⊙ (g² − v)
func (d *AdamNODE[T]) adamRHS(tp *autograd.Tape[T], z, g, r1, r2 autograd.Var[T]) autograd.Var[T] {
	zv, gv := z.Value(), g.Value()
	n := gv.Len()
	if zv.Len() != 3*n {
		panic(&tensor.ShapeError{Op: "odeblock.AdamNODE", Msg: fmt.Sprintf("f(h) of shape %v for a state of shape %v", gv.Shape(), zv.Shape())})
	}
	a1 := tensor.SigmoidOf(float64(r1.Value().Data()[0]))
	a2 := tensor.SigmoidOf(float64(r2.Value().Data()[0]))
	out := tp.Scratch(zv.Shape()...)
	zd, gd, od := zv.Data(), gv.Data(), out.Data()
	m, v := zd[n:2*n], zd[2*n:]
	// s(v) into the h part of out first, then h' = −m/s over it.
	dh := od[:n]
	ta1, ta2 := T(a1), T(a2)
	dm, dv := od[n:2*n], od[2*n:3*n]
	gd, m, v = gd[:n], m[:n], v[:n]
	if useAdamKernels[T](n) {
		// In assembly, to the bit; ScaleSoftplus's +ε in the kernel's registers.
		eps := d.S == ScaleSoftplus
		if eps {
			d.softplusScaleParts(dh, nil, v)
		} else {
			d.scaleInto(dh, v)
		}
		runAdamRHSFwd(&adamFwdArgs[T]{g: &gd[0], m: &m[0], v: &v[0], dh: &dh[0], dm: &dm[0], dv: &dv[0], n: n, a1: ta1, a2: ta2, eps: T(d.eps())}, eps)
	} else {
		d.scaleInto(dh, v)
		for i, gi := range gd {
			mi := m[i]
			dh[i] = -mi / dh[i]
			dm[i] = ta1 * (-gi - mi)
			dv[i] = ta2 * (T(gi*gi) - v[i]) // the square rounded, on every GOARCH
		}
	}
	return autograd.CustomDiff("AdamNODE.F", out, func(c *tensor.Tensor[T]) ([]*tensor.Tensor[T], error) {
		cd := c.Data()
		ch, cm, cv := cd[:n], cd[n:2*n], cd[2*n:3*n]
		gz := tp.Scratch(zv.Shape()...)
		gg := tp.Scratch(gv.Shape()...)
		gzd, ggd := gz.Data(), gg.Data()
		clear(gzd[:n])
		gm, gvv := gzd[n:2*n], gzd[2*n:3*n]
		// s(v) into gm, s'(v) into gvv, then the gradients over them.
		ggd = ggd[:n]
		var sr1, sr2 float64
		if useAdamKernels[T](n) {
			// In assembly: the same gradients to the bit, the sums in float64
			// lanes (see adamband_amd64.h).
			post := d.S == ScaleSoftplus // s′'s last loop in the kernel's registers
			if post {
				d.softplusScaleParts(gm, gvv, v)
			} else {
				d.scaleDerivInto(gm, gvv, v)
			}
			args := &adamBwdArgs[T]{g: &gd[0], m: &m[0], v: &v[0], ch: &ch[0], cm: &cm[0], cv: &cv[0], s: &gm[0], ds: &gvv[0], gg: &ggd[0],
				n: n, a1: ta1, a2: ta2, eps: T(d.eps())}
			runAdamRHSBwd(args, post)
			sr1, sr2 = args.sr1, args.sr2
		} else {
			d.scaleDerivInto(gm, gvv, v)
			sr1, sr2 = adamRHSBwdLoop(gd, m, v, ch, cm, cv, gm, gvv, ggd, ta1, ta2)
		}
		gr1, gr2 := tp.Scratch(1), tp.Scratch(1)
		gr1.Data()[0] = T(a1 * (1 - a1) * sr1)
		gr2.Data()[0] = T(a2 * (1 - a2) * sr2)
		return []*tensor.Tensor[T]{gz, gg, gr1, gr2}, nil
	}, d.opsBackward(), z, g, r1, r2)
}

// adamRHSByOps records AdamNODE's right-hand side op by op, as the
// equations read: the reference for the fused node, and its backward in ops
// (autograd.OpsVJP), for gradients of gradients.
func adamRHSByOps[T tensor.Float](d *AdamNODE[T], z, g, r1, r2 autograd.Var[T]) autograd.Var[T] {
	p := splitParts(z, 3)
	m, v := p[1], p[2]
	a1, a2 := autograd.Sigmoid(r1), autograd.Sigmoid(r2)
	var s autograd.Var[T]
	if d.S == ScaleSoftplus {
		s = autograd.AddConst(autograd.Sqrt(autograd.Softplus(v)), d.eps())
	} else {
		s = autograd.Sqrt(autograd.AddConst(v, d.eps()))
	}
	return Stack(autograd.Neg(autograd.Div(m, s)),
		autograd.MulScalar(autograd.Neg(autograd.Add(g, m)), a1),
		autograd.MulScalar(autograd.Sub(autograd.Square(g), v), a2))
}

// opsBackward returns the backward in ops of the node adamRHS records,
// made once per AdamNODE (a closure per evaluation would allocate).
func (d *AdamNODE[T]) opsBackward() func(gy autograd.Var[T], in []autograd.Var[T]) ([]autograd.Var[T], error) {
	if d.opsBack == nil {
		byOps := func(in []autograd.Var[T]) autograd.Var[T] { return adamRHSByOps(d, in[0], in[1], in[2], in[3]) }
		d.opsBack = func(gy autograd.Var[T], in []autograd.Var[T]) ([]autograd.Var[T], error) {
			return autograd.OpsVJP(byOps, in, gy)
		}
	}
	return d.opsBack
}

// hbRHSOpsVJP is the backward in ops of the node hbRHS records.
func hbRHSOpsVJP[T tensor.Float](gy autograd.Var[T], in []autograd.Var[T]) ([]autograd.Var[T], error) {
	return autograd.OpsVJP(hbRHSInOps[T], in, gy)
}

func hbRHSInOps[T tensor.Float](in []autograd.Var[T]) autograd.Var[T] {
	return hbRHSByOps(in[0], in[1], in[2])
}

func hbRHSByOps[T tensor.Float](z, g, gammaRaw autograd.Var[T]) autograd.Var[T] {
	p := splitParts(z, 2)
	gamma := autograd.Sigmoid(gammaRaw)
	return Stack(autograd.Neg(p[1]), autograd.Sub(g, autograd.MulScalar(p[1], gamma)))
}

// adamRHSBwdLoop is adamRHS's backward loop: from g, the state's m and v,
// the cotangent (ch, cm, cv) and s, s′ in gm and gv, it sets gg = ∂/∂g and
// overwrites gm with ∂/∂m and gv with ∂/∂v, and returns the sums for r1
// and r2 (in float64, over blocks of rhsBlock summed in T).
func adamRHSBwdLoop[T tensor.Float](gd, m, v, ch, cm, cv, gm, gvv, ggd []T, ta1, ta2 T) (sr1, sr2 float64) {
	n := len(ggd)
	gd, m, v, ch, cm, cv, gm, gvv = gd[:n], m[:n], v[:n], ch[:n], cm[:n], cv[:n], gm[:n], gvv[:n]
	for lo := 0; lo < n; lo += rhsBlock {
		hi := min(lo+rhsBlock, n)
		var b1, b2 T
		for i := lo; i < hi; i++ {
			gi, mi, chi, cmi, cvi := gd[i], m[i], ch[i], cm[i], cv[i]
			inv := 1 / gm[i]
			// Each product rounded before the sum, on every GOARCH (the
			// conversions keep the compiler from fusing them, as on arm64).
			ggd[i] = T(-ta1*cmi) + T(2*ta2*gi*cvi)
			gm[i] = T(-chi*inv) - T(ta1*cmi)
			gvv[i] = T(chi*mi*gvv[i]*inv*inv) - T(ta2*cvi)
			b1 += T(cmi * (-gi - mi))
			b2 += T(cvi * (T(gi*gi) - v[i]))
		}
		sr1 += float64(b1)
		sr2 += float64(b2)
	}
	return sr1, sr2
}

// rhsBlock is the length of the blocks whose sums are formed in T before
// they are added in float64.
const rhsBlock = 64

// scaleInto sets s[i] = s(v[i]): √softplus(v) + ε or √(v + ε), with the
// vector kernels of package tensor.
func (d *AdamNODE[T]) scaleInto(s, v []T) {
	st, vt := tensor.FromSlice(s), tensor.FromSlice(v[:len(s)])
	eps := d.eps()
	if d.S == ScaleSoftplus {
		st.Softplus(vt)
		st.Sqrt(st)
		st.AddScalar(st, eps)
		return
	}
	st.AddScalar(vt, eps)
	st.Sqrt(st)
}

// scaleDerivInto sets s[i] = s(v[i]) and ds[i] = s'(v[i]): for
// s = √softplus(v) + ε, s' = σ(v) / (2√softplus(v)) (0 where softplus(v)
// underflows to 0, the limit e^{v/2}/2 there being below the smallest
// number); for s = √(v + ε), s' = 1 / (2s).
func (d *AdamNODE[T]) scaleDerivInto(s, ds, v []T) {
	eps := d.eps()
	if d.S == ScaleSoftplus {
		d.softplusScaleParts(s, ds, v)
		ds = ds[:len(s)]
		for i, r := range s {
			if r > 0 {
				ds[i] *= 0.5 / r
			} else {
				ds[i] = 0
			}
			s[i] = r + eps
		}
		return
	}
	st, vt := tensor.FromSlice(s), tensor.FromSlice(v[:len(s)])
	st.AddScalar(vt, eps)
	st.Sqrt(st)
	for i, si := range s {
		ds[i] = 1 / (2 * si)
	}
}

// softplusScaleParts sets s[i] = √softplus(v[i]) and, unless ds is nil,
// ds[i] = σ(v[i]): the parts of ScaleSoftplus's s and s′ that the vector
// kernels of package tensor compute (scaleInto and scaleDerivInto finish
// them).
func (d *AdamNODE[T]) softplusScaleParts(s, ds, v []T) {
	st, vt := tensor.FromSlice(s), tensor.FromSlice(v[:len(s)])
	st.Softplus(vt)
	st.Sqrt(st)
	if ds != nil {
		tensor.FromSlice(ds[:len(s)]).Sigmoid(vt)
	}
}

// hbRHS records HBNODE's right-hand side (−m, g − γ·m) from the state
// z = (h, m) and g = f(h, t), γ = σ(γ_raw): one node, whose backward in
// ops is opsBack (hbRHSOpsVJP). Its backward, for the
// cotangent (c_h, c_m), is ∂/∂g = c_m, ∂/∂h = 0, ∂/∂m = −c_h − γ·c_m and
// ∂/∂γ_raw = −γ(1−γ)·Σ c_m ⊙ m.
func hbRHS[T tensor.Float](tp *autograd.Tape[T], z, g, gammaRaw autograd.Var[T], opsBack func(gy autograd.Var[T], in []autograd.Var[T]) ([]autograd.Var[T], error)) autograd.Var[T] {
	zv, gv := z.Value(), g.Value()
	n := gv.Len()
	if zv.Len() != 2*n {
		panic(&tensor.ShapeError{Op: "odeblock.HBNODE", Msg: fmt.Sprintf("f(h) of shape %v for a state of shape %v", gv.Shape(), zv.Shape())})
	}
	gamma := tensor.SigmoidOf(float64(gammaRaw.Value().Data()[0]))
	tg := T(gamma)
	out := tp.Scratch(zv.Shape()...)
	zd, gd, od := zv.Data(), gv.Data(), out.Data()
	m := zd[n : 2*n]
	dh, dm := od[:n], od[n:2*n]
	gd = gd[:n]
	for i, mi := range m {
		dh[i] = -mi
		dm[i] = gd[i] - tg*mi
	}
	return autograd.CustomDiff("HBNODE.F", out, func(c *tensor.Tensor[T]) ([]*tensor.Tensor[T], error) {
		cd := c.Data()
		ch, cm := cd[:n], cd[n:2*n]
		gz := tp.Scratch(zv.Shape()...)
		gzd := gz.Data()
		clear(gzd[:n])
		gm := gzd[n : 2*n]
		var sum float64
		for i, mi := range m {
			gm[i] = -ch[i] - tg*cm[i]
			sum += float64(cm[i]) * float64(mi)
		}
		gr := tp.Scratch(1)
		gr.Data()[0] = T(-gamma * (1 - gamma) * sum)
		// ∂/∂g is c_m itself: a view of the cotangent is read before
		// backward's caller reuses it.
		return []*tensor.Tensor[T]{gz, tensor.FromSlice(cm, gv.Shape()...), gr}, nil
	}, opsBack, z, g, gammaRaw)
}
