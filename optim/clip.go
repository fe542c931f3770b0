package optim

import (
	"errors"
	"fmt"
	"math"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// ErrNonFinite is wrapped by the error of ClipGradNorm when the gradient norm
// is NaN or infinite.
var ErrNonFinite = errors.New("non-finite gradient norm")

// GradNorm returns the global L2 norm of the gradients of params,
//
//	‖g‖ = √(Σ_p Σ_i g_p[i]²),
//
// computed in float64 with scaling so that it neither overflows nor
// underflows. Parameters whose Grad is nil are skipped.
func GradNorm[T tensor.Float](params []*autograd.Param[T]) float64 {
	// Combine the per-tensor norms as Norm2 combines elements.
	var scale, ssq float64 = 0, 1
	for _, p := range params {
		if p.Grad == nil {
			continue
		}
		n := p.Grad.Norm2()
		if math.IsNaN(n) {
			return n
		}
		if n == 0 {
			continue
		}
		if math.IsInf(n, 0) {
			scale, ssq = n, 1
			continue
		}
		if scale < n {
			ssq = 1 + ssq*(scale/n)*(scale/n)
			scale = n
		} else {
			ssq += (n / scale) * (n / scale)
		}
	}
	return scale * math.Sqrt(ssq)
}

// ClipGradNorm scales the gradients of params so that their global L2 norm
// (GradNorm) is at most maxNorm, as torch.nn.utils.clip_grad_norm_, and
// returns the norm before clipping. With n = GradNorm(params) it multiplies
// every gradient by
//
//	c = maxNorm / (n + 1e-6)   when c < 1 (that is, n > maxNorm − 1e-6),
//
// and leaves the gradients alone otherwise. When n is NaN or infinite it
// changes nothing and returns n with an error wrapping ErrNonFinite (torch's
// error_if_nonfinite): a NaN is never silently spread into the parameters.
// Parameters whose Grad is nil are skipped. It panics if maxNorm is negative
// or NaN.
func ClipGradNorm[T tensor.Float](params []*autograd.Param[T], maxNorm float64) (float64, error) {
	if !(maxNorm >= 0) {
		panic(fmt.Sprintf("optim: ClipGradNorm: max norm %v (want ≥ 0)", maxNorm))
	}
	n := GradNorm(params)
	if math.IsNaN(n) || math.IsInf(n, 0) {
		return n, fmt.Errorf("optim: ClipGradNorm: %w %v over %d parameters; gradients left unchanged", ErrNonFinite, n, len(params))
	}
	c := maxNorm / (n + 1e-6)
	if c < 1 {
		for _, p := range params {
			if p.Grad != nil {
				p.Grad.Scale(p.Grad, T(c))
			}
		}
	}
	return n, nil
}

// GradNormOn is GradNorm with the sums of squares formed by e's
// Elementwise where e has one (a GPU engine: one number per parameter
// comes to the host, not the gradients), else GradNorm itself. The
// device's float64 sums are not scaled: when they overflow (float64
// gradients beyond 1e154) or underflow, GradNorm forms the norm on the
// host instead.
func GradNormOn[T tensor.Float](e tensor.Engine[T], params []*autograd.Param[T]) float64 {
	el := tensor.DeviceElementwise(e)
	if el == nil {
		return GradNorm(params)
	}
	var ssq float64
	for _, p := range params {
		if p.Grad != nil {
			ssq += el.SumSquares(p.Grad)
		}
	}
	if math.IsNaN(ssq) {
		return ssq
	}
	if math.IsInf(ssq, 0) || ssq != 0 && ssq < 0x1p-1000 {
		return GradNorm(params)
	}
	return math.Sqrt(ssq)
}

// ClipGradNormOn is ClipGradNorm with the norm formed by GradNormOn and
// the gradients scaled by e's Elementwise where e has one, so that on a
// GPU engine they stay on the device.
func ClipGradNormOn[T tensor.Float](e tensor.Engine[T], params []*autograd.Param[T], maxNorm float64) (float64, error) {
	el := tensor.DeviceElementwise(e)
	if el == nil {
		return ClipGradNorm(params, maxNorm)
	}
	if !(maxNorm >= 0) {
		panic(fmt.Sprintf("optim: ClipGradNorm: max norm %v (want ≥ 0)", maxNorm))
	}
	n := GradNormOn(e, params)
	if math.IsNaN(n) || math.IsInf(n, 0) {
		return n, fmt.Errorf("optim: ClipGradNorm: %w %v over %d parameters; gradients left unchanged", ErrNonFinite, n, len(params))
	}
	if c := maxNorm / (n + 1e-6); c < 1 {
		for _, p := range params {
			if p.Grad != nil {
				el.Map(tensor.MapScale, p.Grad, p.Grad, T(c), 0)
			}
		}
	}
	return n, nil
}
