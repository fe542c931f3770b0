package odeblock

import (
	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// The six model families of the paper. Each wraps a user field f(h, t) and
// lays its state out as parts stacked along the leading axis: a batch of B
// feature maps [B, ...] gives a state [P·B, ...] holding h, then m (then v).
// Stack builds such a state; Part reads one part.

// Stack returns the state [P·B, ...] holding the given parts [B, ...] in
// order (for AdamNODE: h, m, v).
func Stack[T tensor.Float](parts ...autograd.Var[T]) autograd.Var[T] {
	return autograd.Concat(0, parts...)
}

// Part returns part i of a state of p parts (0 is h).
func Part[T tensor.Float](z autograd.Var[T], i, p int) autograd.Var[T] {
	n := z.Shape()[0] / p
	return autograd.Narrow(z, 0, i*n, n)
}

// onDevice reports whether tp computes on a device (its engine has a
// tensor.Elementwise): there the families' right-hand sides are recorded
// op by op, each op the engine's, where on the CPU they are one fused
// node computed in host memory.
func onDevice[T tensor.Float](tp *autograd.Tape[T]) bool {
	return tensor.DeviceElementwise(tp.Engine()) != nil
}

// scalarParam returns a learnable scalar (shape [1]) with initial value v.
func scalarParam[T tensor.Float](name string, v float64) *autograd.Param[T] {
	return autograd.NewParam(name, tensor.FromSlice([]T{T(v)}, 1))
}

func withParams[T tensor.Float](f Field[T], own ...*autograd.Param[T]) []*autograd.Param[T] {
	return append(append([]*autograd.Param[T](nil), f.Params()...), own...)
}

// NODE is the neural ODE h' = f(h, t). ANODE is the same dynamics on an input
// padded with zero channels (AugmentChannels).
type NODE[T tensor.Float] struct{ F Field[T] }

// Eval implements Dynamics.
func (d *NODE[T]) Eval(tp *autograd.Tape[T], t float64, z autograd.Var[T]) autograd.Var[T] {
	return d.F.ForwardT(tp, t, z)
}

// Params implements Dynamics.
func (d *NODE[T]) Params() []*autograd.Param[T] { return d.F.Params() }

// AugmentChannels returns x [B, C, ...] with p zero channels appended along
// axis 1: ANODE's initial state.
func AugmentChannels[T tensor.Float](tp *autograd.Tape[T], x autograd.Var[T], p int) autograd.Var[T] {
	s := x.Shape()
	s[1] = p
	return autograd.Concat(1, x, tp.Const(tensor.New[T](s...)))
}

// SONODE is the second-order ODE h” = f([h, h'], t) as the first-order
// system z = (h, u): h' = u, u' = f([h, u], t), where [h, u] joins the parts
// along the channel axis (f sees 2C channels and returns C).
type SONODE[T tensor.Float] struct{ F Field[T] }

// Eval implements Dynamics.
func (d *SONODE[T]) Eval(tp *autograd.Tape[T], t float64, z autograd.Var[T]) autograd.Var[T] {
	p := splitParts(z, 2)
	return Stack(p[1], d.F.ForwardT(tp, t, autograd.Concat(1, p[0], p[1])))
}

// Params implements Dynamics.
func (d *SONODE[T]) Params() []*autograd.Param[T] { return d.F.Params() }

// HBNODE is the heavy-ball neural ODE h' = −m, m' = f(h, t) − γ·m with
// γ = σ(γ_raw) learnable. Its adjoint is specialised: one VJP of f per
// evaluation.
type HBNODE[T tensor.Float] struct {
	F        Field[T]
	GammaRaw *autograd.Param[T] // γ = σ(GammaRaw), shape [1]

	views [4]partViews[T] // of z, a, dz, da in EvalAdjoint
	// opsBack is hbRHS's backward in ops, made once (a generic function's
	// value costs an allocation each time it is taken).
	opsBack func(gy autograd.Var[T], in []autograd.Var[T]) ([]autograd.Var[T], error)
}

// NewHBNODE returns an HBNODE with γ_raw initialised to gammaRaw (the paper:
// −3).
func NewHBNODE[T tensor.Float](f Field[T], gammaRaw float64) *HBNODE[T] {
	return &HBNODE[T]{F: f, GammaRaw: scalarParam[T]("gamma", gammaRaw)}
}

// Eval implements Dynamics.
func (d *HBNODE[T]) Eval(tp *autograd.Tape[T], t float64, z autograd.Var[T]) autograd.Var[T] {
	checkParts(z, 2)
	g := d.F.ForwardT(tp, t, Part(z, 0, 2))
	if d.opsBack == nil {
		d.opsBack = hbRHSOpsVJP[T]
	}
	if hd, ok := fusedOn[hbRHSDevice[T]](tp); ok {
		return hbRHSOn(tp, hd, z, g, tp.Param(d.GammaRaw), d.opsBack)
	}
	if onDevice(tp) {
		return hbRHSByOps(z, g, tp.Param(d.GammaRaw))
	}
	return hbRHS(tp, z, g, tp.Param(d.GammaRaw), d.opsBack)
}

// Params implements Dynamics: f's parameters, then γ_raw.
func (d *HBNODE[T]) Params() []*autograd.Param[T] { return withParams(d.F, d.GammaRaw) }

// EvalAdjoint implements Adjointer. With g = f(h), J = ∂g/∂h:
//
//	a_h' = −a_m·J,  a_m' = a_h + γ·a_m,
//	g_θ' = −a_m·∂g/∂θ,  g_γraw' = γ(1−γ)·Σ a_m ⊙ m.
func (d *HBNODE[T]) EvalAdjoint(pb *autograd.Pullback[T], t float64, z, a, dz, da *tensor.Tensor[T], dg []*tensor.Tensor[T]) error {
	zp, ap, dzp, dap := d.views[0].of(z, 2), d.views[1].of(a, 2), d.views[2].of(dz, 2), d.views[3].of(da, 2)
	h, m, ah, am := zp[0], zp[1], ap[0], ap[1]
	gamma := T(tensor.SigmoidOf(float64(d.GammaRaw.Value.Data()[0])))
	// One VJP of f with cotangent −a_m; dz_m holds −a_m meanwhile.
	negAm := dzp[1].Neg(am)
	fp := listed(d.F.Params())
	g, err := pb.VJP(func(tp *autograd.Tape[T], in []autograd.Var[T]) autograd.Var[T] {
		return d.F.ForwardT(tp, t, in[0])
	}, []*tensor.Tensor[T]{h}, negAm, paramDest(dap[0], fp, dg))
	if err != nil {
		return err
	}
	dzp[0].Neg(m)
	dzp[1].AddScaled(g, -gamma, m)
	dap[1].AddScaled(ah, gamma, am)
	if dg != nil {
		dg[len(fp)].Data()[0] = T(float64(gamma) * (1 - float64(gamma)) * float64(tensor.Dot(am, m)))
	}
	return nil
}

// paramDest is the VJP destination of a family's EvalAdjoint: the input
// cotangent into dx, the field's parameters' into the first of dg, or
// none when dg is nil (not wanted at this evaluation).
func paramDest[T tensor.Float](dx *tensor.Tensor[T], fp []*autograd.Param[T], dg []*tensor.Tensor[T]) autograd.VJPDest[T] {
	if dg == nil {
		return autograd.VJPDest[T]{Inputs: []*tensor.Tensor[T]{dx}, Params: fp, SkipParams: true}
	}
	return autograd.VJPDest[T]{Inputs: []*tensor.Tensor[T]{dx}, Params: fp, ParamGrads: dg[:len(fp)]}
}

// Phi is GHBNODE's bounded function on −m.
type Phi int

const (
	PhiTanh     Phi = iota // φ = tanh
	PhiHardtanh            // φ = hardtanh, clamp to [−1, 1]
)

// GHBNODE is the generalised heavy-ball neural ODE h' = φ(−m),
// m' = f(h, t) − γ·m + ξ·h with γ = σ(γ_raw) and ξ = softplus(ξ_raw)
// learnable (so h” + γh' + ξh = −f for φ the identity: a restoring term).
type GHBNODE[T tensor.Float] struct {
	F        Field[T]
	GammaRaw *autograd.Param[T] // γ = σ(GammaRaw)
	XiRaw    *autograd.Param[T] // ξ = softplus(XiRaw)
	Phi      Phi

	// opsBack is the fused device node's backward in ops, made once.
	opsBack func(gy autograd.Var[T], in []autograd.Var[T]) ([]autograd.Var[T], error)
}

// NewGHBNODE returns a GHBNODE with the given initial raw scalars (the
// paper's MNIST model: γ_raw = −3, ξ_raw = 2) and φ = tanh.
func NewGHBNODE[T tensor.Float](f Field[T], gammaRaw, xiRaw float64) *GHBNODE[T] {
	return &GHBNODE[T]{F: f, GammaRaw: scalarParam[T]("gamma", gammaRaw), XiRaw: scalarParam[T]("xi", xiRaw)}
}

// Eval implements Dynamics.
func (d *GHBNODE[T]) Eval(tp *autograd.Tape[T], t float64, z autograd.Var[T]) autograd.Var[T] {
	if gd, ok := fusedOn[ghbRHSDevice[T]](tp); ok && d.Phi == PhiTanh {
		checkParts(z, 2)
		g := d.F.ForwardT(tp, t, Part(z, 0, 2))
		return d.ghbRHSOn(tp, gd, z, g, tp.Param(d.GammaRaw), tp.Param(d.XiRaw))
	}
	p := splitParts(z, 2)
	return d.rhsByOps(p[0], p[1], func() autograd.Var[T] { return d.F.ForwardT(tp, t, p[0]) }, tp.Param(d.GammaRaw), tp.Param(d.XiRaw))
}

// rhsByOps records GHBNODE's right-hand side op by op from the parts h
// and m, f(h) recorded by g after γ and ξ.
func (d *GHBNODE[T]) rhsByOps(h, m autograd.Var[T], g func() autograd.Var[T], gammaRaw, xiRaw autograd.Var[T]) autograd.Var[T] {
	gamma := autograd.Sigmoid(gammaRaw)
	xi := autograd.Softplus(xiRaw)
	var dh autograd.Var[T]
	if d.Phi == PhiHardtanh {
		dh = autograd.Hardtanh(autograd.Neg(m), -1, 1)
	} else {
		dh = autograd.Tanh(autograd.Neg(m))
	}
	dm := autograd.Add(autograd.Sub(g(), autograd.MulScalar(m, gamma)), autograd.MulScalar(h, xi))
	return Stack(dh, dm)
}

// Params implements Dynamics: f's parameters, then γ_raw and ξ_raw.
func (d *GHBNODE[T]) Params() []*autograd.Param[T] { return withParams(d.F, d.GammaRaw, d.XiRaw) }

// Scale is AdamNODE's denominator s(v).
type Scale int

const (
	// ScaleSqrt is s(v) = √(v + ε), the paper's.
	ScaleSqrt Scale = iota
	// ScaleSoftplus is s(v) = √softplus(v) + ε, the authors' code's, which
	// stays defined for v < 0.
	ScaleSoftplus
)

// AdamNODE is the adaptive-moment neural ODE
//
//	h' = −m / s(v),  m' = a1·(−f(h, t) − m),  v' = a2·(f(h, t)² − v)
//
// with a1 = σ(r1) (the paper's 1−α) and a2 = σ(r2) (the paper's 1−β)
// learnable, s as Scale with ε = Eps. Its adjoint is specialised: one VJP of
// f per backward evaluation.
type AdamNODE[T tensor.Float] struct {
	F      Field[T]
	R1, R2 *autograd.Param[T]
	S      Scale
	Eps    float64 // ε; 1e-8 when 0

	ones, c, gbuf *tensor.Tensor[T]
	s, ds         []T             // s(v) and s'(v) during EvalAdjoint
	sums          []float64       // the blocks' sums of EvalAdjoint (adamWork.blocks)
	views         [4]partViews[T] // of z, a, dz, da in EvalAdjoint
	// opsBack is adamRHS's backward in ops (opsBackward), made once.
	opsBack func(gy autograd.Var[T], in []autograd.Var[T]) ([]autograd.Var[T], error)
}

// NewAdamNODE returns an AdamNODE with raw scalars r1, r2 (the paper's MNIST
// model: −5 and 5) and the given s(v).
func NewAdamNODE[T tensor.Float](f Field[T], r1, r2 float64, s Scale) *AdamNODE[T] {
	return &AdamNODE[T]{F: f, R1: scalarParam[T]("r1", r1), R2: scalarParam[T]("r2", r2), S: s}
}

func (d *AdamNODE[T]) eps() T {
	if d.Eps == 0 {
		return 1e-8
	}
	return T(d.Eps)
}

// AdamInitialState returns the AdamNODE state (h0, m0, v0 = m0²).
func AdamInitialState[T tensor.Float](h0, m0 autograd.Var[T]) autograd.Var[T] {
	return Stack(h0, m0, autograd.Square(m0))
}

// Eval implements Dynamics.
func (d *AdamNODE[T]) Eval(tp *autograd.Tape[T], t float64, z autograd.Var[T]) autograd.Var[T] {
	checkParts(z, 3)
	g := d.F.ForwardT(tp, t, Part(z, 0, 3))
	if ad, ok := fusedOn[adamRHSDevice[T]](tp); ok {
		return d.adamRHSOn(tp, ad, z, g, tp.Param(d.R1), tp.Param(d.R2))
	}
	if onDevice(tp) {
		return adamRHSByOps(d, z, g, tp.Param(d.R1), tp.Param(d.R2))
	}
	return d.adamRHS(tp, z, g, tp.Param(d.R1), tp.Param(d.R2))
}

// Params implements Dynamics: f's parameters, then r1 and r2.
func (d *AdamNODE[T]) Params() []*autograd.Param[T] { return withParams(d.F, d.R1, d.R2) }

// EvalAdjoint implements Adjointer with the derived AdamNODE adjoint. With
// g = f(h), J = ∂g/∂h and c = a1·a_m − 2·a2·(g ⊙ a_v):
//
//	a_h' = c·J
//	a_m' = a_h / s(v) + a1·a_m
//	a_v' = −a_h ⊙ m ⊙ s'(v) / s(v)² + a2·a_v
//	g_θ' = c·∂g/∂θ   (the same VJP)
//	g_r1' = a1(1−a1)·Σ a_m ⊙ (g + m)
//	g_r2' = −a2(1−a2)·Σ a_v ⊙ (g² − v)
//
// (The paper prints a_h' without the a1 and 2·a2·g factors.)
func (d *AdamNODE[T]) EvalAdjoint(pb *autograd.Pullback[T], t float64, z, a, dz, da *tensor.Tensor[T], dg []*tensor.Tensor[T]) error {
	zp, ap, dzp, dap := d.views[0].of(z, 3), d.views[1].of(a, 3), d.views[2].of(dz, 3), d.views[3].of(da, 3)
	h, m, v := zp[0], zp[1], zp[2]
	ah, am, av := ap[0], ap[1], ap[2]
	a1 := tensor.SigmoidOf(float64(d.R1.Value.Data()[0]))
	a2 := tensor.SigmoidOf(float64(d.R2.Value.Data()[0]))
	if d.ones == nil || !d.ones.SameShape(h) {
		d.ones = tensor.Full[T](1, h.Shape()...)
		d.c = tensor.New[T](h.Shape()...)
		d.gbuf = tensor.New[T](h.Shape()...)
	}
	fp := listed(d.F.Params())
	// One VJP of Σ c ⊙ f(h) with c held constant: its input cotangent is c·J
	// and its parameter cotangent c·∂g/∂θ. c needs g, so it is formed inside.
	_, err := pb.VJP(func(tp *autograd.Tape[T], in []autograd.Var[T]) autograd.Var[T] {
		g := d.F.ForwardT(tp, t, in[0])
		d.gbuf.Copy(g.Value())
		cd, gd, amd, avd := d.c.Data(), d.gbuf.Data(), am.Data(), av.Data()
		ta1, ta2 := T(a1), T(2*a2)
		gd, amd, avd = gd[:len(cd)], amd[:len(cd)], avd[:len(cd)]
		for i := range cd {
			cd[i] = ta1*amd[i] - ta2*gd[i]*avd[i]
		}
		return autograd.Mul(g, tp.Const(d.c))
	}, []*tensor.Tensor[T]{h}, d.ones, paramDest(dap[0], fp, dg))
	if err != nil {
		return err
	}

	gd := d.gbuf.Data()
	hd, md, vd := h.Data(), m.Data(), v.Data()
	ahd, amd, avd := ah.Data(), am.Data(), av.Data()
	dhd, dmd, dvd := dzp[0].Data(), dzp[1].Data(), dzp[2].Data()
	damd, davd := dap[1].Data(), dap[2].Data()
	if len(d.s) != len(vd) {
		d.s, d.ds = make([]T, len(vd)), make([]T, len(vd))
	}
	w := adamWork[T]{d: d, a1: T(a1), a2: T(a2), g: gd, m: md, v: vd, ah: ahd, am: amd, av: avd, dh: dhd, dm: dmd, dv: dvd, dam: damd, dav: davd}
	nblk := (len(hd) + rhsBlock - 1) / rhsBlock
	if dg != nil {
		// The sums for r1 and r2: a pair per block of rhsBlock elements,
		// summed in T, then the blocks added in float64 in order (the same
		// bits however the blocks are spread over the workers).
		if len(d.sums) < 2*nblk {
			d.sums = make([]float64, 2*nblk)
		}
		w.sums = d.sums[:2*nblk]
	}
	if len(hd) >= adamParallel {
		wp := w                                                            // a copy for the workers' closure, so that w stays on the stack
		pb.Engine().Parallel(nblk, func(lo, hi int) { wp.blocks(lo, hi) }) // large maps: over the engine's workers
	} else {
		w.blocks(0, nblk)
	}
	if dg == nil {
		return nil
	}
	var sr1, sr2 float64
	for b := range nblk {
		sr1 += w.sums[2*b]
		sr2 += w.sums[2*b+1]
	}
	dg[len(fp)].Data()[0] = T(a1 * (1 - a1) * sr1)
	dg[len(fp)+1].Data()[0] = T(-a2 * (1 - a2) * sr2)
	return nil
}

// adamParallel is the number of elements of h from which AdamNODE's
// elementwise adjoint update is split over the engine's workers: the
// update reads and writes 13 arrays. From 2¹⁶ to 2¹⁴: an AdamNODE of
// batch 2048 and width 16 (32 768 elements) trained 10–19% faster a step
// with the adjoint (two sets of 7 and 9 alternating mlpbench runs), one of
// batch 512 (8 192) 6% slower from 2¹³.
const adamParallel = 1 << 14

// adamWork holds the operands of AdamNODE's elementwise adjoint update.
type adamWork[T tensor.Float] struct {
	d                               *AdamNODE[T]
	a1, a2                          T
	g, m, v, ah, am, av, dh, dm, dv []T
	dam, dav                        []T
	sums                            []float64 // the blocks' sums for r1 and r2, when wanted
}

// blocks runs band over the blocks [lo, hi) of rhsBlock elements and, when
// w.sums is set, forms their sums for r1's and r2's gradients:
// Σ a_m⊙(g + m) and Σ a_v⊙(g² − v), each block's in T.
func (w *adamWork[T]) blocks(lo, hi int) {
	n := len(w.g)
	w.band(lo*rhsBlock, min(hi*rhsBlock, n))
	if w.sums == nil {
		return
	}
	g, m, v, am, av := w.g, w.m, w.v, w.am, w.av
	for b := lo; b < hi; b++ {
		var b1, b2 T
		for i := b * rhsBlock; i < min((b+1)*rhsBlock, n); i++ {
			gi := g[i]
			b1 += T(am[i] * (gi + m[i]))
			b2 += T(av[i] * (T(gi*gi) - v[i]))
		}
		w.sums[2*b], w.sums[2*b+1] = float64(b1), float64(b2)
	}
}

// band computes elements [lo, hi) of dz = (h', m', v') and of a_m', a_v'.
func (w *adamWork[T]) band(lo, hi int) {
	d, a1, a2 := w.d, w.a1, w.a2
	s, ds := d.s[lo:hi], d.ds[lo:hi]
	n := hi - lo
	asm := useAdamKernels[T](n)
	post := asm && d.S == ScaleSoftplus // s′'s last loop in the kernel's registers
	if post {
		d.softplusScaleParts(s, ds, w.v[lo:hi])
	} else {
		d.scaleDerivInto(s, ds, w.v[lo:hi])
	}
	g, m, v, ah, am, av := w.g[lo:hi], w.m[lo:hi], w.v[lo:hi], w.ah[lo:hi], w.am[lo:hi], w.av[lo:hi]
	dh, dm, dv, dam, dav := w.dh[lo:hi], w.dm[lo:hi], w.dv[lo:hi], w.dam[lo:hi], w.dav[lo:hi]
	g, m, v, ah, am, av = g[:n], m[:n], v[:n], ah[:n], am[:n], av[:n]
	dh, dm, dv, dam, dav = dh[:n], dm[:n], dv[:n], dam[:n], dav[:n]
	if asm {
		runAdamBand(&adamBandArgs[T]{
			g: &g[0], m: &m[0], v: &v[0], ah: &ah[0], am: &am[0], av: &av[0], s: &s[0], ds: &ds[0],
			dh: &dh[0], dm: &dm[0], dv: &dv[0], dam: &dam[0], dav: &dav[0],
			n: n, a1: a1, a2: a2, eps: T(d.eps()),
		}, post)
		return
	}
	// Each product rounded (the conversions keep the compiler from fusing
	// it into the sum that follows, as it does on arm64): the kernels'
	// rounding on every GOARCH.
	for i := range n {
		gi, mi, ahi := g[i], m[i], ah[i]
		inv := 1 / s[i]
		dh[i] = -mi * inv
		dm[i] = a1 * (-gi - mi)
		dv[i] = a2 * (T(gi*gi) - v[i])
		dam[i] = T(ahi*inv) + T(a1*am[i])
		dav[i] = T(-ahi*mi*ds[i]*inv*inv) + T(a2*av[i])
	}
}
