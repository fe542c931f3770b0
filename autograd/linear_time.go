package autograd

import (
	"fmt"

	"github.com/adamnode/adamnode/tensor"
)

// LinearTime returns Linear(ConcatTime(x, tv), w, b) without building the
// concatenation: the weight w [Out, C+1] sees x [B, C] through its first C
// columns, and its last column sees the constant time tv, which adds to the
// bias:
//
//	z[n, o] = Σ_{i<C} x[n, i]·w[o, i] + (tv·w[o, C] + b[o])
//
// The result equals the unfused pair up to rounding, and saves the
// concatenated copy of x, its gradient, and the GEMMs' 17th column of a
// 16-wide state (which ran at about 60% of the rate of the rest).
//
// Backward: ∂L/∂x += g·w[:, :C], ∂L/∂w[:, :C] += gᵀ·x, ∂L/∂w[o, C] +=
// tv·Σ_n g[n, o], ∂L/∂b[o] += Σ_n g[n, o]. tv is a constant (no gradient).
func LinearTime[T tensor.Float](x Var[T], tv T, w, b Var[T]) Var[T] {
	t, xe, we := use2("LinearTime", x, w)
	be := useOpt("LinearTime", t, b)
	xt, wt := xe.value, we.value
	if xt.Rank() != 2 || wt.Rank() != 2 || xt.Dim(1)+1 != wt.Dim(1) {
		panic(&tensor.ShapeError{Op: "autograd.LinearTime", Msg: fmt.Sprintf("input of shape %v does not fit weight of shape %v (want x [B, C] and w [Out, C+1]: one more input column, for the time)", xt.Shape(), wt.Shape())})
	}
	out, c, batch := wt.Dim(0), xt.Dim(1), xt.Dim(0)
	if be != nil {
		mustBias("LinearTime", we, be, out)
	}
	// The bias with the time column folded in: tv·w[:, C] + b.
	bias := t.arena.get(out)
	bd, wd := bias.Data(), wt.ReadData()
	for o := range bd {
		bd[o] = tv * wd[o*(c+1)+c]
	}
	if be != nil {
		tensor.AxpySlice(1, be.value.ReadData()[:out], bd)
	}
	z := t.arena.get(batch, out)
	tensor.GemmBiasSlices(t.eng, false, true, batch, out, c, 1, xt.ReadData(), c, wd, c+1, bd, z.Data(), out)
	t.arena.put(bias, -1)
	e := t.record("LinearTime", z, linearTimeRule[T]{}, xe, we, be)
	e.f[0] = tv
	return t.varOf(e)
}

// LinearTimeAct returns act(LinearTime(x, tv, w, b)) as one op (see
// Activation).
func LinearTimeAct[T tensor.Float](x Var[T], tv T, w, b Var[T], act Activation) Var[T] {
	return fuse[T, linearTimeRule[T]](LinearTime(x, tv, w, b), act)
}

type linearTimeRule[T tensor.Float] struct{}

func (linearTimeRule[T]) backward(t *Tape[T], e *entry[T]) {
	x, w, b, g := e.in[0], e.in[1], e.in[2], e.grad
	tv := e.f[0]
	out, c, batch := w.value.Dim(0), x.value.Dim(1), x.value.Dim(0)
	gd := g.ReadData()
	if dst, acc := t.gradDst(x); dst != nil && c > 0 && batch > 0 {
		var beta T
		if acc {
			beta = 1
		}
		t.eng.Gemm(false, false, batch, c, out, 1, gd, out, w.value.ReadData(), c+1, beta, dst.Data(), c)
	}
	dw, accW := t.gradDst(w)
	db, accB := t.gradDst(b)
	if dw == nil && db == nil {
		return
	}
	// Σ_n g[n, o]: the bias's gradient, and over tv the time column's.
	sum := t.arena.get(out)
	t.sumPerChannel(sum, false, g)
	sd := sum.ReadData()
	if dw != nil {
		// Set (not accumulated) is cleared first: the GEMM writes only
		// the first C columns.
		dwd := dw.Data()
		if !accW {
			clear(dwd)
		}
		if c > 0 && batch > 0 {
			t.eng.Gemm(true, false, out, c, batch, 1, gd, out, x.value.ReadData(), c, 1, dwd, c+1)
		}
		for o, s := range sd {
			dwd[o*(c+1)+c] += tv * s
		}
	}
	if db != nil {
		dbd := db.Data()
		if !accB {
			clear(dbd)
		}
		tensor.AxpySlice(1, sd, dbd)
	}
	t.arena.put(sum, -1)
}
