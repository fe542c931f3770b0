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
// Every solve goes through the integrator's one tensor entry (solve), in
// its device mode when the phase runs on the device: f is handed the
// solver's device buffers, or views of its host ones, and a step's state
// (stepState) is likewise one or the other. The rest are choices, not
// second copies: the
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
// memory (onDev, the engine's Elementwise) or in host memory (the host's,
// as the forward pass's: a CPU engine's own, its workers taking large
// states, as they take the solver's stage sums).
func (a *adjoint[T]) setPhase(onDev bool) {
	a.onDev, a.ew = onDev, hostElementwise(a.p.eng)
	if onDev {
		a.ew = tensor.DeviceElementwise(a.p.eng)
	}
}

// solve runs s with f from y0 over ts into outs through the integrator's
// one tensor entry, on the device when the phase runs there, else in host
// memory.
func (a *adjoint[T]) solve(s *Solver[T], f hooks.TensorEvalFunc[T], y0 *tensor.Tensor[T], ts []float64, outs []*tensor.Tensor[T]) (Stats, error) {
	eng := a.p.eng
	if !a.onDev {
		eng = nil
	}
	hk[T]().UseDevice(s, eng)
	return hk[T]().SolveTensorsEval(s, f, y0, ts, outs)
}

// stepState returns the state at the end of step si as n flat elements:
// the z part of the augmented state in a backward step.
func (a *adjoint[T]) stepState(si StepInfo[T]) *tensor.Tensor[T] {
	return a.w.part(si.State1, 0, 0, a.w.flat)
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
// buffers it views, has moved since it was filled (the views of the old
// one would keep it alive).
func (w *adjointWork[T]) dropStaleParts(slab []T) {
	var base *T
	if len(slab) > 0 {
		base = &slab[0]
	}
	if base != w.slabSeen {
		w.slabSeen = base
		clear(w.parts)
	}
}

// partKey names a part of a tensor by the tensor's storage and first
// element (a front of a buffer, a stage input without the quadratures,
// names the whole buffer's parts: f gets the same tensors for z, a and
// their derivatives at every stage, and a family's EvalAdjoint keeps
// views of the tensors it is handed), the part's first element and its
// kind (0 flat, 1 in the state's shape, 2+j parameter j's).
type partKey[T tensor.Float] struct {
	st     *tensor.Storage
	at     *T
	lo, id int
}

// part returns elements [lo, lo+size) of x in shape (of size elements), a
// view made once per memory and part.
func (w *adjointWork[T]) part(x *tensor.Tensor[T], lo, id int, shape []int) *tensor.Tensor[T] {
	k := partKey[T]{x.Storage(), &x.HostMemory()[0], lo, id}
	v := w.parts[k]
	if v == nil {
		size := 1
		for _, s := range shape {
			size *= s
		}
		v = x.Reshape(x.Len()).Slice(lo, lo+size).Reshape(shape...)
		if len(w.parts) > 4096 {
			clear(w.parts) // a new set of buffers: start over
		}
		w.parts[k] = v
	}
	return v
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
