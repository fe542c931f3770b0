package cuda

import (
	"fmt"
	"math"

	"github.com/adamnode/adamnode/tensor"
)

// AdamScale names AdamNODE's s(v), the denominator of h′ = −m/s(v).
type AdamScale int32

const (
	AdamScaleSqrt     AdamScale = iota // s = √(v + ε), s′ = 1/(2s) (the paper)
	AdamScaleSoftplus                  // s = √softplus(v) + ε, s′ = σ(v)·(0.5/√softplus(v)), 0 where softplus(v) is (the reference code)
)

// AdamParams are the scalars of AdamNODE's right-hand side: a1 = σ(r1)
// and a2 = σ(r2) in float64 (as odeblock forms them, tensor.SigmoidOf;
// the elementwise work uses them rounded to T, the gradients of r1 and r2
// in float64), ε and the form of s.
type AdamParams[T tensor.Float] struct {
	A1, A2 float64
	Eps    T
	Scale  AdamScale
}

func (p AdamParams[T]) check(name string) error {
	if p.Scale != AdamScaleSqrt && p.Scale != AdamScaleSoftplus {
		return fmt.Errorf("cuda: %s: unknown AdamScale %d", name, p.Scale)
	}
	return nil
}

func (p AdamParams[T]) args() (a1, a2, eps, sp uint64) {
	if p.Scale == AdamScaleSoftplus {
		sp = 1
	}
	return scalar(T(p.A1)), scalar(T(p.A2)), scalar(p.Eps), sp
}

// The fused kernels' s(v) is computed in the kernel: √ correctly rounded,
// so with AdamScaleSqrt every output is odeblock's CPU loop's to the bit;
// with AdamScaleSoftplus, softplus and σ are CUDA's (within a few ulps of
// the tensor package's), so the outputs that divide by s or multiply by
// s′ are within those ulps of the CPU's and the others equal.

// AdamRHS sets AdamNODE's right-hand side F(h, m, v) from g = f(h, t):
//
//	dh = −m/s(v)    dm = a1·(−g − m)    dv = a2·(g² − v)
//
// each operation rounded in T in the order of odeblock's adamRHS loop,
// none fused. All buffers have one length (the state's parts are Slices
// of one buffer); outputs must not overlap inputs.
func AdamRHS[T tensor.Float](k *Kernels, p AdamParams[T], dh, dm, dv, g, m, v Buffer[T]) error {
	if err := p.check("AdamRHS"); err != nil {
		return err
	}
	if err := sameLen("AdamRHS", g.n, m.n, v.n, dh.n, dm.n, dv.n); err != nil || g.n == 0 {
		return err
	}
	a1, a2, eps, sp := p.args()
	if err := k.enter(); err != nil {
		return err
	}
	defer k.leave()
	return k.launch(kernelIndex[T](kAdamFwd), k.gridFor(g.n), uint64(dh.ptr), uint64(dm.ptr), uint64(dv.ptr), uint64(g.ptr), uint64(m.ptr), uint64(v.ptr),
		a1, a2, eps, sp, uint64(g.n))
}

// AdamRHSBackward sets the gradients of AdamRHS's inputs for the
// cotangent (ch, cm, cv) of (dh, dm, dv), as odeblock's adamRHS backward
// (adamRHSBwdLoop) forms them:
//
//	gg = −a1·cm + 2·a2·g ⊙ cv
//	gm = −ch/s − a1·cm              (−ch·(1/s), as the CPU)
//	gv = ch ⊙ m ⊙ s′/s² − a2·cv      (ch·m·s′·(1/s)·(1/s))
//	gr[0] = a1(1−a1)·Σ cm ⊙ (−g − m)   ∂/∂r1
//	gr[1] = a2(1−a2)·Σ cv ⊙ (g² − v)   ∂/∂r2
//
// (∂/∂h is 0). The sums: over blocks of 64 elements each summed in T in
// order, as the CPU's; the blocks' sums added in float64 in a fixed tree
// (the CPU adds them in order), then scaled and rounded to T: within
// (n/64)·2⁻⁵² of the CPU's sums, the same bits every run. gr has 2
// elements and stays on the device. Outputs must not overlap inputs.
func AdamRHSBackward[T tensor.Float](k *Kernels, p AdamParams[T], gg, gm, gv, gr, g, m, v, ch, cm, cv Buffer[T]) error {
	if err := p.check("AdamRHSBackward"); err != nil {
		return err
	}
	if err := sameLen("AdamRHSBackward", g.n, m.n, v.n, ch.n, cm.n, cv.n, gg.n, gm.n, gv.n); err != nil {
		return err
	}
	if gr.n != 2 {
		return fmt.Errorf("cuda: AdamRHSBackward: a gradient of r1 and r2 of %d elements, not 2", gr.n)
	}
	a1, a2, eps, sp := p.args()
	if err := k.enter(); err != nil {
		return err
	}
	defer k.leave()
	parts := sumParts(g.n)
	if err := k.launch(kernelIndex[T](kAdamBwd), parts, uint64(gg.ptr), uint64(gm.ptr), uint64(gv.ptr), uint64(k.norm),
		uint64(g.ptr), uint64(m.ptr), uint64(v.ptr), uint64(ch.ptr), uint64(cm.ptr), uint64(cv.ptr), a1, a2, eps, sp, uint64(g.n)); err != nil {
		return err
	}
	c1, c2 := p.A1*(1-p.A1), p.A2*(1-p.A2)
	return k.launch(kernelIndex[T](kAdamSums), 1, uint64(gr.ptr), uint64(k.norm), uint64(parts), math.Float64bits(c1), math.Float64bits(c2))
}

// AdamBand is the elementwise band of AdamNODE's specialised adjoint
// (odeblock's adamWork.band), from g = f(h, t), the state (m, v) and the
// adjoint (ah, am, av):
//
//	dh = −m·(1/s)    dm = a1·(−g − m)    dv = a2·(g² − v)
//	dam = ah·(1/s) + a1·am
//	dav = −ah ⊙ m ⊙ s′·(1/s)·(1/s) + a2·av
//
// and, unless gr is empty, the gradients of r1 and r2 into its 2
// elements: gr[0] = a1(1−a1)·Σ am ⊙ (g + m), gr[1] = −a2(1−a2)·Σ av ⊙
// (g² − v), the sums formed as AdamRHSBackward's. Outputs must not overlap
// inputs.
func AdamBand[T tensor.Float](k *Kernels, p AdamParams[T], dh, dm, dv, dam, dav, gr, g, m, v, ah, am, av Buffer[T]) error {
	if err := p.check("AdamBand"); err != nil {
		return err
	}
	if err := sameLen("AdamBand", g.n, m.n, v.n, ah.n, am.n, av.n, dh.n, dm.n, dv.n, dam.n, dav.n); err != nil {
		return err
	}
	if gr.n != 0 && gr.n != 2 {
		return fmt.Errorf("cuda: AdamBand: a gradient of r1 and r2 of %d elements, not 2 (or none)", gr.n)
	}
	if g.n == 0 && gr.n == 0 {
		return nil
	}
	a1, a2, eps, sp := p.args()
	if err := k.enter(); err != nil {
		return err
	}
	defer k.leave()
	parts := sumParts(g.n)
	if err := k.launch(kernelIndex[T](kAdamBand), parts, uint64(dh.ptr), uint64(dm.ptr), uint64(dv.ptr), uint64(dam.ptr), uint64(dav.ptr), uint64(k.norm),
		uint64(g.ptr), uint64(m.ptr), uint64(v.ptr), uint64(ah.ptr), uint64(am.ptr), uint64(av.ptr), a1, a2, eps, sp, uint64(g.n)); err != nil {
		return err
	}
	if gr.n == 0 {
		return nil
	}
	c1, c2 := p.A1*(1-p.A1), -p.A2*(1-p.A2)
	return k.launch(kernelIndex[T](kAdamSums), 1, uint64(gr.ptr), uint64(k.norm), uint64(parts), math.Float64bits(c1), math.Float64bits(c2))
}

// AdamCotangent sets c = a1·am − 2a2·g ⊙ av, the cotangent with which
// AdamNODE's specialised adjoint pulls f back (one VJP gives a_h′ and
// g_θ′), as odeblock forms it: (a1·am) − ((2a2)·g)·av in T, a1 and 2a2
// rounded to T; the CPU's to the bit. c may be any of the others.
func AdamCotangent[T tensor.Float](k *Kernels, p AdamParams[T], c, g, am, av Buffer[T]) error {
	if err := sameLen("AdamCotangent", c.n, g.n, am.n, av.n); err != nil || c.n == 0 {
		return err
	}
	if err := k.enter(); err != nil {
		return err
	}
	defer k.leave()
	return k.launch(kernelIndex[T](kAdamCot), k.gridFor(c.n), uint64(c.ptr), uint64(g.ptr), uint64(am.ptr), uint64(av.ptr),
		scalar(T(p.A1)), scalar(T(2*p.A2)), uint64(c.n))
}
