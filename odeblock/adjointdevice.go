package odeblock

import (
	"math"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock/internal/hooks"
	"github.com/adamnode/adamnode/tensor"
)

// The Adjoint mode's backward pass on a device.
//
// When the forward solve ran on the device (forwardOnDevice) and the
// dynamics' adjoint is the generic one or a family's of this package, the
// backward solve runs there too: the augmented state [z, a, g_θ] lives in
// the engine's memory, the solver is integrate's device mode (its mixed
// norm the engine's ErrorNorm over the parts), the augmented system is one
// VJP of the dynamics on the device's tape (the families' right-hand sides
// op by op, as in their forward), the output gradients are added and the
// outputs re-anchored by the engine, and the drift check reads three sums
// of squares. The families' fused host kernels (EvalAdjoint) are not used
// there. A user's own Adjointer, the Interpolated mode's dense output and
// the pure integrals' mask of the drift check keep the host path.

// devAdjoint holds the device buffers of a backward pass on the device.
type devAdjoint[T tensor.Float] struct {
	ew       tensor.Elementwise[T]
	y, other *tensor.Tensor[T] // the augmented state [z, a, g_θ], flat
	diff     *tensor.Tensor[T] // [n], the drift check's difference
	parts    map[partKey[T]]*tensor.Tensor[T]
	at       []*tensor.Tensor[T]
	// grads are the VJP's parameter gradients, tensors of their own: a
	// host access to one (Conv2DTime's time channel is assembled on the
	// host) then copies that gradient, not the whole augmented state it
	// goes into.
	grads []*tensor.Tensor[T]
}

// partKey names a part of a tensor f was handed: the tensor, the part's
// first element and the part (0 z, 1 a, 2+j parameter j's).
type partKey[T tensor.Float] struct {
	t      *tensor.Tensor[T]
	lo, at int
}

// backwardOnDevice reports whether the backward solve runs on the device.
func (a *adjoint[T]) backwardOnDevice() bool {
	p := a.p
	if p.dev == nil { // the forward solve ran on the host (forwardOnDevice)
		return false
	}
	_, special := p.b.Dynamics.(Adjointer[T])
	return !special || a.opt.Generic || takesNilGrads(p.b.Dynamics)
}

// devWork returns the device buffers for states of N = 2n + m elements.
func (a *adjoint[T]) devWork(N int) *devAdjoint[T] {
	w := a.w
	if w.dev == nil || w.dev.y.Len() != N {
		w.dev = &devAdjoint[T]{ew: tensor.DeviceElementwise(a.p.eng), y: tensor.New[T](N), other: tensor.New[T](N),
			diff: tensor.New[T](a.p.n), parts: map[partKey[T]]*tensor.Tensor[T]{}, at: make([]*tensor.Tensor[T], 1)}
	}
	return w.dev
}

// part returns elements [lo, lo+size) of the flat tensor x in shape.
func (d *devAdjoint[T]) part(x *tensor.Tensor[T], lo, id int, shape []int) *tensor.Tensor[T] {
	k := partKey[T]{x, lo, id}
	v := d.parts[k]
	if v == nil {
		size := 1
		for _, s := range shape {
			size *= s
		}
		v = x.Reshape(x.Len()).Slice(lo, lo+size).Reshape(shape...)
		if len(d.parts) > 4096 {
			clear(d.parts) // a new set of buffers: start over
		}
		d.parts[k] = v
	}
	return v
}

// devBackward is backward on the device.
func (a *adjoint[T]) devBackward(g *tensor.Tensor[T]) ([]*tensor.Tensor[T], error) {
	p, w := a.p, a.w
	n := p.n
	N := 2 * n
	for _, s := range w.sizes {
		N += s
	}
	d := a.devWork(N)
	hk[T]().UseDevice(w.solver, p.eng)
	w.solver.StepStatesOnDevice = p.b.OnStep == nil
	a.fT = a.devAugmented(d)
	flat := func(x *tensor.Tensor[T]) *tensor.Tensor[T] { return x.Reshape(x.Len()) }
	d.ew.Fill(d.y, 0) // a and g_θ start at zero
	last := len(p.ts) - 1
	adj := d.y.Slice(n, 2*n)
	d.ew.Copy(adj, flat(g.Slice(last, last+1)))
	a.next = len(a.anchors) - 1
	for k := last; k >= 1; k-- {
		pieces := a.stretch(k)
		for i := 0; i+1 < len(pieces); i++ {
			if err := a.piece(pieces[i], pieces[i+1], k); err != nil {
				return nil, err
			}
		}
		d.ew.LinComb(adj, adj, []T{1}, []*tensor.Tensor[T]{flat(g.Slice(k-1, k))})
	}
	grads := []*tensor.Tensor[T]{d.part(d.y, n, 1, p.shape)}
	off := 2 * n
	for j, prm := range p.params {
		grads = append(grads, d.part(d.y, off, 2+j, prm.Value.Shape()))
		off += w.sizes[j]
	}
	return grads, nil
}

// anchorTensor returns an anchor's state as a flat tensor: the forward's
// output row on the device, or a view of a state kept on the host.
func anchorTensor[T tensor.Float](an anchor[T]) *tensor.Tensor[T] {
	if an.zt != nil {
		return an.zt
	}
	return tensor.FromSlice(an.z)
}

// anchorNorm2 returns ‖z‖₂² of an anchor's state.
func (a *adjoint[T]) anchorNorm2(an anchor[T]) float64 {
	if an.zt != nil {
		return tensor.DeviceElementwise(a.p.eng).SumSquares(an.zt)
	}
	return norm2(an.z)
}

// stepNorm2 returns ‖z‖₂² of the reconstructed state at the end of the
// backward step si: on the device when the step's states are there.
func (a *adjoint[T]) stepNorm2(si StepInfo[T]) float64 {
	n := a.p.n
	if si.Y1 == nil {
		return tensor.DeviceElementwise(a.p.eng).SumSquares(si.State1.Slice(0, n))
	}
	return norm2(si.Y1[:n])
}

// devPiece is piece on the device.
func (a *adjoint[T]) devPiece(hi, lo anchor[T], k int) error {
	n, w, d := a.p.n, a.w, a.w.dev
	recovery := k > 0 && !a.opt.FailOnDrift
	d.ew.Copy(d.y.Slice(0, n), anchorTensor(hi))
	if recovery && a.seen != nil && a.opt.MaxDrift >= 0 {
		w.solver.OnStep = chainHooks(a.guard(a.seen[k-1], hi, lo), a.p.b.OnStep)
	}
	out := []*tensor.Tensor[T]{d.y, d.other}
	st, err := hk[T]().SolveTensorsEval(w.solver, a.fT, d.y, []float64{hi.t, lo.t}, out)
	a.stats = a.stats.Add(st)
	if err == nil {
		a1 := math.Sqrt(d.ew.SumSquares(d.y.Slice(n, 2*n)))
		a0 := math.Sqrt(d.ew.SumSquares(d.other.Slice(n, 2*n)))
		err = a.devCheckDrift(d, lo, hi, a.driftRTol(k), a1, a0)
	}
	w.solver.OnStep = a.p.b.OnStep
	return a.settle(err, recovery, hi, lo, func() { d.ew.Copy(d.y, d.other) })
}

// devCheckDrift is checkDrift on the device: the reconstruction
// d.other[:n] against lo's state, with hi's, from three sums of squares
// (on the host, with the states read there, when the dynamics have pure
// integrals to leave out).
func (a *adjoint[T]) devCheckDrift(d *devAdjoint[T], lo, hi anchor[T], rtol, a1, a0 float64) error {
	n := a.p.n
	bound := a.opt.MaxDrift
	if bound < 0 {
		return nil
	}
	zr, z0, z1 := d.other.Slice(0, n), anchorTensor(lo), anchorTensor(hi)
	if a.integrals() != nil {
		return a.checkDrift(zr.ReadData(), z0.ReadData(), z1.ReadData(), hi.t, lo.t, rtol, a.bopt.ATol, a1, a0)
	}
	d.ew.LinComb(d.diff, zr, []T{-1}, []*tensor.Tensor[T]{z0})
	dd := d.ew.SumSquares(d.diff)
	zz := math.Max(d.ew.SumSquares(z0), d.ew.SumSquares(z1))
	rel := math.Sqrt(dd) / math.Max(math.Sqrt(zz), a.bopt.ATol*math.Sqrt(float64(n)))
	return driftVerdict(rel, bound, rtol, a1, a0, hi.t, lo.t)
}

// devAugmented is augmented on the device: one VJP of the dynamics on the
// device's tape, F(z) copied into dz and the cotangents negated by the
// engine.
func (a *adjoint[T]) devAugmented(d *devAdjoint[T]) func(kind hooks.EvalKind, stage int, t float64, y, dy *tensor.Tensor[T]) error {
	p, w := a.p, a.w
	n := p.n
	dyn := p.b.Dynamics
	if len(d.grads) != len(p.params) {
		d.grads = d.grads[:0]
		for _, prm := range p.params {
			d.grads = append(d.grads, tensor.New[T](prm.Value.Shape()...))
		}
	}
	dst := autograd.VJPDest[T]{Inputs: make([]*tensor.Tensor[T], 1), Params: p.params, ParamGrads: d.grads}
	var now float64
	eval := func(tp *autograd.Tape[T], in []autograd.Var[T]) autograd.Var[T] {
		return dyn.Eval(tp, now, in[0])
	}
	// The Interpolated mode's: the state from the forward's dense output,
	// on the device; the z part of the augmented state stays as it is.
	log := a.log
	var zlog, zlogShaped *tensor.Tensor[T]
	if log != nil {
		zlog = tensor.New[T](n)
		zlogShaped = zlog.Reshape(p.shape...)
	}
	return func(_ hooks.EvalKind, _ int, t float64, y, dy *tensor.Tensor[T]) (err error) {
		defer recoverUnlisted(&err)
		// dy whole on the device first: its parts are then written into
		// its copy in place.
		d.ew.Fill(dy, 0)
		z, adj := d.part(y, 0, 0, p.shape), d.part(y, n, 1, p.shape)
		dz, da := d.part(dy, 0, 0, p.shape), d.part(dy, n, 1, p.shape)
		if log != nil {
			log.AtTensor(t, zlog)
			z, dz = zlogShaped, nil
		}
		grads := dy.Len() > 2*n
		vd := dst
		if !grads {
			vd.ParamGrads, vd.SkipParams = nil, true
		}
		d.at[0], vd.Inputs[0], now = z, da, t
		val, err := w.pb.VJP(eval, d.at, adj, vd)
		d.at[0] = nil
		if err != nil {
			return err
		}
		if dz != nil {
			d.ew.Copy(dz, val)
		}
		d.ew.Map(tensor.MapNeg, da, da, 0, 0)
		if grads {
			off := 2 * n
			for j, g := range d.grads {
				d.ew.Map(tensor.MapNeg, d.part(dy, off, 2+j, g.Shape()), g, 0, 0)
				off += w.sizes[j]
			}
		}
		return nil
	}
}
