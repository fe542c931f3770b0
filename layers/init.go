package layers

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/adamnode/adamnode/tensor"
)

// FanIn returns the fan-in of a weight of the given shape, as PyTorch
// computes it: shape[1] times the product of the dimensions after it (the
// receptive field): In for a Linear weight [Out, In], C·KH·KW for a Conv2D
// weight [Co, C, KH, KW]. It panics for a shape of rank < 2.
func FanIn(shape []int) int {
	if len(shape) < 2 {
		panic(&tensor.ShapeError{Op: "layers.FanIn", Msg: fmt.Sprintf("shape %v has no fan-in (want rank ≥ 2)", shape)})
	}
	n := shape[1]
	for _, d := range shape[2:] {
		n *= d
	}
	return n
}

// Uniform fills t with independent samples uniform on [lo, hi) drawn from
// rng, in row-major order, and returns t (torch.nn.init.uniform_).
func Uniform[T tensor.Float](rng *rand.Rand, t *tensor.Tensor[T], lo, hi float64) *tensor.Tensor[T] {
	d := t.Data()
	for i := range d {
		d[i] = T(lo + (hi-lo)*rng.Float64())
	}
	return t
}

// KaimingUniform fills w with samples uniform on [−bound, bound) drawn from
// rng, as torch.nn.init.kaiming_uniform_ (mode fan_in, nonlinearity
// leaky_relu with negative slope a):
//
//	gain = √(2 / (1 + a²)),  bound = gain · √(3 / fanIn)
//
// With a = √5, PyTorch's default for Linear and Conv2d weights, bound is
// 1/√fanIn. A zero fanIn leaves w as zeros. It returns w.
func KaimingUniform[T tensor.Float](rng *rand.Rand, w *tensor.Tensor[T], a float64, fanIn int) *tensor.Tensor[T] {
	if fanIn <= 0 {
		return w.Zero()
	}
	// In torch's order: gain, std = gain/√fanIn, bound = √3·std.
	gain := math.Sqrt(2 / (1 + a*a))
	bound := math.Sqrt(3) * (gain / math.Sqrt(float64(fanIn)))
	return Uniform(rng, w, -bound, bound)
}

// BiasBound returns PyTorch's bound for a bias of a layer of the given
// fan-in, 1/√fanIn (0 when fanIn is 0): the bias is uniform on
// [−bound, bound).
func BiasBound(fanIn int) float64 {
	if fanIn <= 0 {
		return 0
	}
	return 1 / math.Sqrt(float64(fanIn))
}

// initWeightBias fills w by KaimingUniform with a = √5 and b (if not nil)
// uniformly within BiasBound, in that order, as PyTorch's reset_parameters
// of Linear and Conv2d.
func initWeightBias[T tensor.Float](rng *rand.Rand, w, b *tensor.Tensor[T]) {
	fanIn := FanIn(w.Shape())
	KaimingUniform(rng, w, math.Sqrt(5), fanIn)
	if b != nil {
		bb := BiasBound(fanIn)
		Uniform(rng, b, -bb, bb)
	}
}
