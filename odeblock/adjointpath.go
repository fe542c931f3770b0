package odeblock

import (
	"github.com/adamnode/adamnode/odeblock/internal/hooks"
	"github.com/adamnode/adamnode/tensor"
)

// The Adjoint mode's backward pass, written once over tensors.
//
// Every piece of it — the augmented system, the pieces between anchors,
// the drift check and its guard, the recovery's re-solve — works on
// tensors through the phase's Elementwise (adjoint.ew, setPhase): the
// engine's when the phase runs on a device, tensor.HostElementwise
// otherwise. The augmented state [z, a, g_θ] is one flat tensor
// (adjointWork's y and other), its parts cached views (adjointWork.part);
// the forward states it re-anchors to are flat tensors of n elements
// (anchor): output rows of the trajectory, or states kept in the block's
// pool.
//
// Host and device part at the integrator's entry (solve): its device mode
// takes the tensors themselves, its host mode their memory, the augmented
// function then seeing views of the solver's slices (adjointWork.view);
// a step's state (stepState) is accordingly the solver's device buffer or
// a view of its host one. The rest are choices, not second copies: the
// backward solve runs on a device when the forward did, unless the
// dynamics have an Adjointer of the user's own (backwardOnDevice), and
// there the augmented system is one VJP of the dynamics, where the host
// runs the families' fused EvalAdjoint; sums of squares are the engine's
// on a device and norm2's vector kernels on the host (sumSquares); the
// derivative buffer is made resident on a device before its parts are
// written; the drifting columns are named from host states only.

// backwardOnDevice reports whether the backward solve runs on the device.
func (a *adjoint[T]) backwardOnDevice() bool {
	p := a.p
	if !p.onDev { // the forward solve ran on the host (forwardOnDevice)
		return false
	}
	_, special := p.b.Dynamics.(Adjointer[T])
	return !special || a.opt.Generic || takesNilGrads(p.b.Dynamics)
}

// setPhase sets where the phase about to run computes: in the engine's
// memory (onDev, the engine's Elementwise) or in host memory (the CPU's
// Elementwise on the calling goroutine, as the solver's own host loops).
func (a *adjoint[T]) setPhase(onDev bool) {
	a.onDev, a.ew = onDev, tensor.HostElementwise[T]()
	if onDev {
		a.ew = tensor.DeviceElementwise(a.p.eng)
	}
}

// solve runs s with f from y0 over ts into outs: the integrator's device
// mode on the tensors themselves when the phase runs on the device, its
// host mode on their memory otherwise, f then handed views of the
// solver's slices (adjointWork.view), made once per buffer. shape is the
// shape f sees a whole state in (y0's on the device).
func (a *adjoint[T]) solve(s *Solver[T], f hooks.TensorEvalFunc[T], shape []int, y0 *tensor.Tensor[T], ts []float64, outs []*tensor.Tensor[T]) (Stats, error) {
	if a.onDev {
		return hk[T]().SolveTensorsEval(s, f, y0, ts, outs)
	}
	w := a.w
	w.hostOut = w.hostOut[:0]
	for _, o := range outs {
		w.hostOut = append(w.hostOut, o.Data())
	}
	w.evalF, w.evalShape, w.evalLen = f, shape, y0.Len()
	defer func() { w.evalF = nil }()
	return hk[T]().SolveEval(s, w.hostEval, y0.ReadData(), ts, w.hostOut)
}

// view returns the solver's host buffer x as a tensor for f: in the
// state's shape when it holds a whole state; shorter (a stage input or
// derivative of the augmented state without its quadratures, the front of
// one of the solver's buffers), the part in front of the quadratures of
// the whole buffer's view, whose parts are then the whole one's: f gets
// the same tensors for z, a and their derivatives at every stage (a
// family's EvalAdjoint keeps views of the tensors it is handed).
func (w *adjointWork[T]) view(x []T) *tensor.Tensor[T] {
	if len(x) == w.evalLen {
		return w.views.of(x, w.evalShape)
	}
	return w.part(w.views.of(x[:w.evalLen], w.evalShape), 0, frontPart, w.short)
}

// stepState returns the state at the end of step si as n flat elements:
// the z part of the augmented state in a backward step. It is the
// solver's device buffer in a device solve, else a view of its host
// buffer.
func (a *adjoint[T]) stepState(si StepInfo[T]) *tensor.Tensor[T] {
	if si.State1 != nil {
		return a.w.part(si.State1, 0, 0, a.w.flat)
	}
	return a.w.views.of(si.Y1[:a.p.n], a.w.flat)
}

// sumSquares returns ‖x‖₂², summed in float64: the engine's sum on a
// device, norm2's vector kernels in host memory. Every norm of the
// adjoint (the forward's seen states, the guard, the drift check) is this
// one.
func (a *adjoint[T]) sumSquares(x *tensor.Tensor[T]) float64 {
	if a.onDev {
		return a.ew.SumSquares(x)
	}
	return norm2(x.ReadData())
}

// anchorNorm2 returns ‖z‖₂² of an anchor's state.
func (a *adjoint[T]) anchorNorm2(an anchor[T]) float64 { return a.sumSquares(an.z) }

// stepNorm2 returns ‖z‖₂² of the state at the end of step si.
func (a *adjoint[T]) stepNorm2(si StepInfo[T]) float64 { return a.sumSquares(a.stepState(si)) }

// dropStaleParts empties the part cache when the solvers' slab, whose
// buffers it views, has moved to base since it was filled (the views of
// the old one would keep it alive).
func (w *adjointWork[T]) dropStaleParts(base *T) {
	if base != w.slabSeen {
		w.slabSeen = base
		w.dropParts()
	}
}

// partKey names a part of a tensor: the tensor, the part's first element
// and its kind (0 flat, 1 in the state's shape, 2+j parameter j's,
// frontPart the augmented state without its quadratures).
type partKey[T tensor.Float] struct {
	t      *tensor.Tensor[T]
	lo, id int
}

// frontPart is the kind of the part [0, 2n) of an augmented state: z and
// a without the parameters' gradients (view).
const frontPart = -1

// part returns elements [lo, lo+size) of x in shape (of size elements), a
// view made once per tensor and part. A part of a front part is the part
// of its whole tensor.
func (w *adjointWork[T]) part(x *tensor.Tensor[T], lo, id int, shape []int) *tensor.Tensor[T] {
	if whole := w.fronts[x]; whole != nil {
		x = whole
	}
	k := partKey[T]{x, lo, id}
	v := w.parts[k]
	if v == nil {
		size := 1
		for _, s := range shape {
			size *= s
		}
		v = x.Reshape(x.Len()).Slice(lo, lo+size).Reshape(shape...)
		if len(w.parts) > 4096 {
			w.dropParts() // a new set of buffers: start over
		}
		w.parts[k] = v
		if id == frontPart {
			w.fronts[v] = x
		}
	}
	return v
}

// dropParts empties the part cache.
func (w *adjointWork[T]) dropParts() {
	clear(w.parts)
	clear(w.fronts)
}

// rowCache holds the rows of a tensor [L, …] as flat tensors, made once
// for the tensor: a tape reused from pass to pass hands out the same
// trajectory and output gradient.
type rowCache[T tensor.Float] struct {
	of   *tensor.Tensor[T]
	rows []*tensor.Tensor[T]
}

// get returns the rows of x, of n elements each.
func (c *rowCache[T]) get(x *tensor.Tensor[T], n int) []*tensor.Tensor[T] {
	if c.of != x || len(c.rows)*n != x.Len() {
		flat := x.Reshape(x.Len())
		c.of, c.rows = x, make([]*tensor.Tensor[T], x.Len()/max(n, 1))
		for i := range c.rows {
			c.rows[i] = flat.Slice(i*n, (i+1)*n)
		}
	}
	return c.rows
}
