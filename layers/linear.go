package layers

import (
	"math/rand/v2"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// Linear is the affine layer y = x·Wᵀ + b of PyTorch's nn.Linear, for x of
// shape [B, In]:
//
//	y[n, o] = Σ_i x[n, i]·W[o, i] + b[o]
type Linear[T tensor.Float] struct {
	Weight *autograd.Param[T] // W, shape [Out, In], named "weight"
	Bias   *autograd.Param[T] // b, shape [Out], named "bias"; nil for none
}

// NewLinear returns a Linear layer from in to out features, initialised as
// PyTorch's: W uniform within ±1/√in (Kaiming-uniform, a = √5), then b
// uniform within ±1/√in, drawn from rng in that order.
func NewLinear[T tensor.Float](rng *rand.Rand, in, out int) *Linear[T] {
	if in < 0 || out < 0 {
		panic(shapeError("NewLinear", "negative size: %d → %d features (weight [%d, %d])", in, out, out, in))
	}
	w, b := tensor.New[T](out, in), tensor.New[T](out)
	initWeightBias(rng, w, b)
	return &Linear[T]{Weight: autograd.NewParam("weight", w), Bias: autograd.NewParam("bias", b)}
}

// Forward records x·Wᵀ + b. It panics with both shapes if x is not
// [B, In].
func (l *Linear[T]) Forward(tp *autograd.Tape[T], x autograd.Var[T]) autograd.Var[T] {
	return autograd.Linear(x, tp.Param(l.Weight), optParam(tp, l.Bias))
}

// Params returns the weight and, if present, the bias.
func (l *Linear[T]) Params() []*autograd.Param[T] { return weightBias(l.Weight, l.Bias) }

// Conv2D is the 2-D convolution layer of PyTorch's nn.Conv2d (a
// cross-correlation) for x of shape [B, C, H, W]:
//
//	y[n, o, i, j] = Σ_{c,k,l} W[o, c, k, l]·x[n, c, i·s−p+k, j·s−p+l] + b[o]
//
// with stride s and zero padding p; y has shape [B, Co, OH, OW],
// OH = (H + 2p − KH)/s + 1 (likewise OW).
type Conv2D[T tensor.Float] struct {
	Weight *autograd.Param[T] // W, shape [Co, C, KH, KW], named "weight"
	Bias   *autograd.Param[T] // b, shape [Co], named "bias"; nil for none
	Conv   tensor.ConvParams  // stride (0 means 1) and padding
}

// NewConv2D returns a Conv2D layer from in to out channels with a k×k
// kernel and the given stride and padding, initialised as PyTorch's: W
// uniform within ±1/√(in·k·k) (Kaiming-uniform, a = √5), then b uniform
// within the same bound, drawn from rng in that order.
func NewConv2D[T tensor.Float](rng *rand.Rand, in, out, k int, p tensor.ConvParams) *Conv2D[T] {
	if in < 0 || out < 0 || k <= 0 || p.Stride < 0 || p.Pad < 0 {
		panic(shapeError("NewConv2D", "bad sizes: %d → %d channels, kernel %d (weight [%d, %d, %d, %d]), stride %d, padding %d", in, out, k, out, in, k, k, p.Stride, p.Pad))
	}
	w, b := tensor.New[T](out, in, k, k), tensor.New[T](out)
	initWeightBias(rng, w, b)
	return &Conv2D[T]{Weight: autograd.NewParam("weight", w), Bias: autograd.NewParam("bias", b), Conv: p}
}

// Forward records the convolution of x. It panics with both shapes if x
// does not fit the weight.
func (c *Conv2D[T]) Forward(tp *autograd.Tape[T], x autograd.Var[T]) autograd.Var[T] {
	return autograd.Conv2D(x, tp.Param(c.Weight), optParam(tp, c.Bias), c.Conv)
}

// Params returns the weight and, if present, the bias.
func (c *Conv2D[T]) Params() []*autograd.Param[T] { return weightBias(c.Weight, c.Bias) }

// optParam returns tp.Param(p), or the zero Var when p is nil.
func optParam[T tensor.Float](tp *autograd.Tape[T], p *autograd.Param[T]) autograd.Var[T] {
	if p == nil {
		return autograd.Var[T]{}
	}
	return tp.Param(p)
}

func weightBias[T tensor.Float](w, b *autograd.Param[T]) []*autograd.Param[T] {
	if b == nil {
		return []*autograd.Param[T]{w}
	}
	return []*autograd.Param[T]{w, b}
}
