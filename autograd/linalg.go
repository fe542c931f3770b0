package autograd

import (
	"fmt"

	"github.com/adamnode/adamnode/tensor"
)

// gemmInto sets dst = op(a)·op(b), or adds it when acc, computed by eng.
func gemmInto[T tensor.Float](eng tensor.Engine[T], dst *tensor.Tensor[T], acc bool, a *tensor.Tensor[T], ta bool, b *tensor.Tensor[T], tb bool) {
	var beta T
	if acc {
		beta = 1
	} else if k := a.Dim(0); (ta && k == 0) || (!ta && a.Dim(1) == 0) {
		dst.Zero() // an empty product; dst is dirty and beta = 0 only scales it
	}
	dst.Gemm(eng, 1, a, ta, b, tb, beta)
}

// mustBias panics unless b is nil or of shape [c], the channel count of x.
func mustBias[T tensor.Float](op string, x, b *entry[T], c int) {
	if b != nil && !b.value.HasShape(c) {
		panic(&tensor.ShapeError{Op: "autograd." + op, Msg: fmt.Sprintf("bias of shape %v does not fit %d channels of shape %v (want [%d])", b.value.Shape(), c, x.value.Shape(), c)})
	}
}

// AddBias returns x + b with the per-channel b of shape [C] broadcast over x
// of shape [B, C] or [B, C, H, W] (any rank ≥ 2):
//
//	z[n, c, ...] = x[n, c, ...] + b[c]
//
// Backward: ∂L/∂x += g, ∂L/∂b[c] += Σ_{n,...} g[n, c, ...].
func AddBias[T tensor.Float](x, b Var[T]) Var[T] {
	t, xe, be := use2("AddBias", x, b)
	if xe.value.Rank() < 2 || be.value.Rank() != 1 || be.value.Len() != xe.value.Dim(1) {
		panic(&tensor.ShapeError{Op: "autograd.AddBias", Msg: fmt.Sprintf("bias of shape %v does not fit shape %v (want x [B, C, ...] and bias [C])", be.value.Shape(), xe.value.Shape())})
	}
	z := t.arena.like(xe.value)
	if t.onDevice {
		t.ewAddBias(z, xe.value, be.value)
	} else {
		z.AddBias(xe.value, be.value)
	}
	return t.varOf(t.record("AddBias", z, addBiasRule[T]{}, xe, be, nil))
}

type addBiasRule[T tensor.Float] struct{}

func (addBiasRule[T]) backward(t *Tape[T], e *entry[T]) {
	t.addScaledGrad(e.in[0], 1, e.grad)
	if dst, acc := t.gradDst(e.in[1]); dst != nil {
		t.sumPerChannel(dst, acc, e.grad)
	}
}

// MatMul returns the matrix product z = a·b of a [M, K] and b [K, N].
//
// Backward, as two GEMMs: ∂L/∂a += g·bᵀ, ∂L/∂b += aᵀ·g.
func MatMul[T tensor.Float](a, b Var[T]) Var[T] {
	t, ae, be := use2("MatMul", a, b)
	av, bv := ae.value, be.value
	if av.Rank() != 2 || bv.Rank() != 2 || av.Dim(1) != bv.Dim(0) {
		panic(&tensor.ShapeError{Op: "autograd.MatMul", Msg: fmt.Sprintf("shapes %v and %v do not multiply (want [M, K] and [K, N])", av.Shape(), bv.Shape())})
	}
	z := t.arena.get(av.Dim(0), bv.Dim(1))
	gemmInto(t.eng, z, false, av, false, bv, false)
	return t.varOf(t.record("MatMul", z, matMulRule[T]{}, ae, be, nil))
}

type matMulRule[T tensor.Float] struct{}

func (matMulRule[T]) backward(t *Tape[T], e *entry[T]) {
	a, b, g := e.in[0], e.in[1], e.grad
	if dst, acc := t.gradDst(a); dst != nil {
		gemmInto(t.eng, dst, acc, g, false, b.value, true)
	}
	if dst, acc := t.gradDst(b); dst != nil {
		gemmInto(t.eng, dst, acc, a.value, true, g, false)
	}
}

// Transpose returns the transpose xᵀ [N, M] of the matrix x [M, N], as a
// new tensor.
//
// Backward: ∂L/∂x += gᵀ.
func Transpose[T tensor.Float](x Var[T]) Var[T] {
	t, xe := use1("Transpose", x)
	if xe.value.Rank() != 2 {
		panic(&tensor.ShapeError{Op: "autograd.Transpose", Msg: fmt.Sprintf("input of shape %v is not a matrix", xe.value.Shape())})
	}
	z := t.arena.get(xe.value.Dim(1), xe.value.Dim(0))
	transposeInto(z, xe.value, false)
	return t.varOf(t.record("Transpose", z, transposeRule[T]{}, xe, nil, nil))
}

// transposeInto sets (or with acc adds) dst [N, M] = xᵀ for x [M, N].
func transposeInto[T tensor.Float](dst, x *tensor.Tensor[T], acc bool) {
	m, n := x.Dim(0), x.Dim(1)
	d, xd := dst.Data(), x.Data()
	for i := range m {
		for j, v := range xd[i*n : (i+1)*n] {
			if acc {
				d[j*m+i] += v
			} else {
				d[j*m+i] = v
			}
		}
	}
}

type transposeRule[T tensor.Float] struct{}

func (transposeRule[T]) backward(t *Tape[T], e *entry[T]) {
	if dst, acc := t.gradDst(e.in[0]); dst != nil {
		transposeInto(dst, e.grad, acc)
	}
}

func (transposeRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return one(Transpose(g))
}

// Linear returns the affine map z = x·wᵀ + b of x [B, In] by the weight w
// [Out, In] and the bias b [Out] (the zero Var for none), as PyTorch's nn.Linear:
//
//	z[n, o] = Σ_i x[n, i]·w[o, i] + b[o]
//
// Backward, as GEMMs: ∂L/∂x += g·w, ∂L/∂w += gᵀ·x, ∂L/∂b[o] += Σ_n g[n, o].
//
// As nn.Linear, x may have any leading dimensions, x [..., In] giving
// z [..., Out] (x [In] gives z [Out]): x is viewed as a matrix of rows
// [−1, In] (Reshape, no copy), and the result viewed back.
func Linear[T tensor.Float](x, w, b Var[T]) Var[T] {
	t, xe, we := use2("Linear", x, w)
	be := useOpt("Linear", t, b)
	xt, wt := xe.value, we.value
	if xt.Rank() != 2 || wt.Rank() != 2 || xt.Dim(1) != wt.Dim(1) {
		if r := xt.Rank(); r != 2 && r > 0 {
			return linearND(x, w, b, IdentityAct)
		}
		panic(&tensor.ShapeError{Op: "autograd.Linear", Msg: fmt.Sprintf("input of shape %v does not fit weight of shape %v (want x [B, In] and w [Out, In])", xt.Shape(), wt.Shape())})
	}
	out := wt.Dim(0)
	z := t.arena.get(xt.Dim(0), out)
	if be != nil {
		mustBias("Linear", we, be, out)
		z.GemmBias(t.eng, 1, xt, false, wt, true, be.value) // an Elementwise adds the bias on its device

	} else {
		gemmInto(t.eng, z, false, xt, false, wt, true)
	}
	return t.varOf(t.record("Linear", z, linearRule[T]{}, xe, we, be))
}

type linearRule[T tensor.Float] struct{}

func (linearRule[T]) backward(t *Tape[T], e *entry[T]) {
	x, w, b, g := e.in[0], e.in[1], e.in[2], e.grad
	if dst, acc := t.gradDst(x); dst != nil {
		gemmInto(t.eng, dst, acc, g, false, w.value, false)
	}
	if dst, acc := t.gradDst(w); dst != nil {
		gemmInto(t.eng, dst, acc, g, true, x.value, false)
	}
	if dst, acc := t.gradDst(b); dst != nil {
		t.sumPerChannel(dst, acc, g)
	}
}

// Conv2D returns the 2-D cross-correlation of x [B, C, H, W] by the filter w
// [Co, C, KH, KW] plus the per-channel bias b [Co] (the zero Var for none), with the
// stride and zero padding of p, computed by the tape's engine:
//
//	z[n, o, i, j] = Σ_{c,k,l} w[o, c, k, l]·x[n, c, i·s−pad+k, j·s−pad+l] + b[o]
//
// z has shape [B, Co, OH, OW] with OH = (H + 2·pad − KH)/s + 1 (likewise OW).
//
// Backward: ∂L/∂x and ∂L/∂w by the engine's Conv2DBackwardData and
// Conv2DBackwardFilter (accumulating), ∂L/∂b[o] += Σ_{n,i,j} g[n, o, i, j].
func Conv2D[T tensor.Float](x, w, b Var[T], p tensor.ConvParams) Var[T] {
	t, xe, we := use2("Conv2D", x, w)
	be := useOpt("Conv2D", t, b)
	xt, wt := xe.value, we.value
	if xt.Rank() != 4 || wt.Rank() != 4 || xt.Dim(1) != wt.Dim(1) || p.Stride < 0 || p.Pad < 0 {
		panic(&tensor.ShapeError{Op: "autograd.Conv2D", Msg: fmt.Sprintf("input of shape %v does not fit filter of shape %v (want x [B, C, H, W] and w [Co, C, KH, KW])", xt.Shape(), wt.Shape())})
	}
	oh, ow := tensor.ConvOutputSize(xt.Dim(2), wt.Dim(2), p), tensor.ConvOutputSize(xt.Dim(3), wt.Dim(3), p)
	if oh == 0 || ow == 0 {
		panic(&tensor.ShapeError{Op: "autograd.Conv2D", Msg: fmt.Sprintf("filter of shape %v does not fit input of shape %v with stride %d and padding %d", wt.Shape(), xt.Shape(), p.Stride, p.Pad)})
	}
	if be != nil {
		mustBias("Conv2D", we, be, wt.Dim(0))
	}
	z := t.arena.get(xt.Dim(0), wt.Dim(0), oh, ow)
	var bt *tensor.Tensor[T]
	if be != nil {
		bt = be.value
	}
	t.eng.Conv2D(z, xt, wt, bt, p)
	e := t.record("Conv2D", z, conv2DRule[T]{}, xe, we, be)
	e.n[0], e.n[1] = p.Stride, p.Pad
	return t.varOf(e)
}

type conv2DRule[T tensor.Float] struct{}

func (conv2DRule[T]) backward(t *Tape[T], e *entry[T]) {
	x, w, b, g := e.in[0], e.in[1], e.in[2], e.grad
	p := tensor.ConvParams{Stride: e.n[0], Pad: e.n[1]}
	if dst, acc := t.gradDst(x); dst != nil {
		t.eng.Conv2DBackwardData(dst, g, w.value, p, acc)
	}
	dw, accW := t.gradDst(w)
	db, accB := t.gradDst(b)
	if dw != nil && db != nil && accW == accB {
		// The bias gradient in the same pass, over the same workers.
		t.eng.Conv2DBackwardFilter(dw, db, g, x.value, p, accW)
		return
	}
	if dw != nil {
		t.eng.Conv2DBackwardFilter(dw, nil, g, x.value, p, accW)
	}
	if db != nil {
		t.sumPerChannel(db, accB, g)
	}
}

// linearND is Linear (and LinearAct) of x [..., In] of rank ≠ 2: the
// rank-2 op on x viewed as [−1, In], viewed back as [..., Out].
func linearND[T tensor.Float](x, w, b Var[T], act Activation) Var[T] {
	xt, wt := x.use("Linear").value, w.use("Linear").value
	r := xt.Rank()
	if wt.Rank() != 2 || xt.Dim(r-1) != wt.Dim(1) {
		panic(&tensor.ShapeError{Op: "autograd.Linear", Msg: fmt.Sprintf("input of shape %v does not fit weight of shape %v (want x [..., In] and w [Out, In])", xt.Shape(), wt.Shape())})
	}
	var buf [maxPooledRank]int
	dims := buf[:0]
	for i := 0; i < r-1; i++ {
		dims = append(dims, xt.Dim(i))
	}
	dims = append(dims, wt.Dim(0))
	z := fuse[T, linearRule[T]](Linear(Reshape(x, -1, wt.Dim(1)), w, b), act)
	return Reshape(z, dims...)
}
