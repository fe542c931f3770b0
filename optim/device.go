package optim

import (
	"math"

	"github.com/adamnode/adamnode/tensor"
)

// device is an optimizer's access to an engine's Elementwise (package
// cuda's GPU engine): SGD, Adam (AdamW) and RMSprop then update the
// parameters where the engine keeps them, with its kernels, instead of
// copying every gradient to the host and every updated value back.
type device[T tensor.Float] struct {
	eng     tensor.Engine[T]
	el      tensor.Elementwise[T]
	scratch [2][]*tensor.Tensor[T] // per parameter shape, made on demand
	coef    []T
	xs      []*tensor.Tensor[T]
}

// UseEngine has Step update the parameters with e's elementwise kernels
// when e has them (tensor.DeviceElementwise: a GPU engine), so that the
// values, gradients and buffers stay in e's memory; with a CPU engine (or
// nil) Step computes on the host, as without the call. SGD, Adam (and
// AdamW) and RMSprop (with momentum, centered, weight decay) have the
// device path, their buffers kept in e's memory, and ZeroGrad zeroes the
// gradients there (autograd.ZeroGradsOn).
//
// On the device the update is formed in T, operation by operation (the
// host forms each element's update in float64 and rounds once): float64
// results agree with the host's to a few ulps, float32 ones to the
// rounding of some ten operations in float32.
func (c *core[T]) UseEngine(e tensor.Engine[T]) {
	c.dev = device[T]{}
	if e != nil {
		c.dev.eng, c.dev.el = e, tensor.DeviceElementwise(e)
	}
}

// tmp returns scratch tensor k shaped like p: one per distinct shape of
// the parameters, made at its first use and kept, so that a step with
// parameters of several shapes allocates nothing after the first.
func (d *device[T]) tmp(k int, p *tensor.Tensor[T]) *tensor.Tensor[T] {
	for _, s := range d.scratch[k] {
		if s.SameShape(p) {
			return s
		}
	}
	s := tensor.New[T](p.Shape()...)
	d.scratch[k] = append(d.scratch[k], s)
	return s
}

// axpy sets z = base + a·x with the Elementwise.
func (d *device[T]) axpy(z, base *tensor.Tensor[T], a T, x *tensor.Tensor[T]) {
	d.coef = append(d.coef[:0], a)
	d.xs = append(d.xs[:0], x)
	d.el.LinComb(z, base, d.coef, d.xs)
	d.xs[0] = nil
}

// scale sets z = a·z.
func (d *device[T]) scale(z *tensor.Tensor[T], a T) {
	if a != 1 {
		d.el.Map(tensor.MapScale, z, z, a, 0)
	}
}

// sgdStep is SGD's update of parameter i on the device.
func (s *SGD[T]) sgdStep(i int, p, g *tensor.Tensor[T], step int64) {
	d := &s.dev
	lr, mu, damp, wd := s.lr, s.cfg.Momentum, s.cfg.Dampening, s.cfg.WeightDecay
	grad := g
	if wd != 0 { // d = g + wd·p
		grad = d.tmp(0, p)
		d.axpy(grad, g, T(wd), p)
	}
	if mu != 0 {
		b := s.bufs[0][i]
		if step == 1 {
			d.el.Copy(b, grad)
		} else { // b = mu·b + (1 − damp)·d
			d.scale(b, T(mu))
			d.axpy(b, b, T(1-damp), grad)
		}
		if s.cfg.Nesterov { // d + mu·b
			n := d.tmp(1, p)
			d.axpy(n, grad, T(mu), b)
			grad = n
		} else {
			grad = b
		}
	}
	d.axpy(p, p, T(-lr), grad)
}

// adamStep is Adam's (AdamW's) update of parameter i on the device.
func (a *Adam[T]) adamStep(i int, p, g *tensor.Tensor[T], step int64) {
	d := &a.dev
	lr, b1, b2, eps, wd := a.lr, a.cfg.Beta1, a.cfg.Beta2, a.cfg.Eps, a.cfg.WeightDecay
	m, v := a.bufs[0][i], a.bufs[1][i]
	t := float64(step)
	stepSize := lr / (1 - math.Pow(b1, t))
	sqrtBC2 := math.Sqrt(1 - math.Pow(b2, t))
	grad := g
	switch {
	case a.decoupled:
		d.scale(p, T(1-lr*wd))
	case wd != 0: // d = g + wd·p
		grad = d.tmp(0, p)
		d.axpy(grad, g, T(wd), p)
	}
	d.scale(m, T(b1)) // m = b1·m + (1 − b1)·d
	d.axpy(m, m, T(1-b1), grad)
	u := d.tmp(1, p)
	d.el.Map(tensor.MapSquare, u, grad, 0, 0) // v = b2·v + (1 − b2)·d²
	d.scale(v, T(b2))
	d.axpy(v, v, T(1-b2), u)
	d.el.Map(tensor.MapSqrt, u, v, 0, 0) // √v/√(1 − b2ᵗ) + eps
	d.scale(u, T(1/sqrtBC2))
	d.el.Map(tensor.MapAddScalar, u, u, T(eps), 0)
	d.el.Binary(tensor.BinaryDiv, u, m, u) // p −= stepSize·m/denominator
	d.axpy(p, p, T(-stepSize), u)
}

// rmspropStep is RMSprop's update of parameter i on the device.
func (r *RMSprop[T]) rmspropStep(i int, p, g *tensor.Tensor[T]) {
	d := &r.dev
	lr, alpha, eps, mu, wd := r.lr, r.cfg.Alpha, r.cfg.Eps, r.cfg.Momentum, r.cfg.WeightDecay
	s := r.bufs[0][i]
	grad := g
	if wd != 0 { // d = g + wd·p
		grad = d.tmp(0, p)
		d.axpy(grad, g, T(wd), p)
	}
	u := d.tmp(1, p)
	d.el.Map(tensor.MapSquare, u, grad, 0, 0) // s = alpha·s + (1 − alpha)·d²
	d.scale(s, T(alpha))
	d.axpy(s, s, T(1-alpha), u)
	if r.kAvg >= 0 { // a = alpha·a + (1 − alpha)·d; √(s − a²) + eps
		a := r.bufs[r.kAvg][i]
		d.scale(a, T(alpha))
		d.axpy(a, a, T(1-alpha), grad)
		d.el.Map(tensor.MapSquare, u, a, 0, 0)
		d.el.Binary(tensor.BinarySub, u, s, u)
		d.el.Map(tensor.MapSqrt, u, u, 0, 0)
	} else { // √s + eps
		d.el.Map(tensor.MapSqrt, u, s, 0, 0)
	}
	d.el.Map(tensor.MapAddScalar, u, u, T(eps), 0)
	d.el.Binary(tensor.BinaryDiv, u, grad, u) // u = d/denominator

	if r.kMom >= 0 { // b = mu·b + d/denominator; p −= lr·b
		b := r.bufs[r.kMom][i]
		d.scale(b, T(mu))
		d.axpy(b, b, 1, u)
		d.axpy(p, p, T(-lr), b)
		return
	}
	d.axpy(p, p, T(-lr), u) // p −= lr·d/denominator
}
