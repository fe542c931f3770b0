package layers

import (
	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// MaxPool2D is PyTorch's nn.MaxPool2d with a square window:
// autograd.MaxPool2D(x, Kernel, Stride, Pad) on x [N, C, H, W]. Stride 0
// means Kernel, as PyTorch's default.
type MaxPool2D[T tensor.Float] struct{ Kernel, Stride, Pad int }

// Forward records the pooling.
func (m MaxPool2D[T]) Forward(_ *autograd.Tape[T], x autograd.Var[T]) autograd.Var[T] {
	return autograd.MaxPool2D(x, m.Kernel, cmpOr(m.Stride, m.Kernel), m.Pad)
}

// Params returns nil: pooling has no parameters.
func (MaxPool2D[T]) Params() []*autograd.Param[T] { return nil }

// AvgPool2D is PyTorch's nn.AvgPool2d with a square window (padding counted
// in the mean): autograd.AvgPool2D(x, Kernel, Stride, Pad). Stride 0 means
// Kernel.
type AvgPool2D[T tensor.Float] struct{ Kernel, Stride, Pad int }

// Forward records the pooling.
func (m AvgPool2D[T]) Forward(_ *autograd.Tape[T], x autograd.Var[T]) autograd.Var[T] {
	return autograd.AvgPool2D(x, m.Kernel, cmpOr(m.Stride, m.Kernel), m.Pad)
}

// Params returns nil: pooling has no parameters.
func (AvgPool2D[T]) Params() []*autograd.Param[T] { return nil }

// AdaptiveAvgPool2D is PyTorch's nn.AdaptiveAvgPool2d: x [N, C, H, W]
// averaged down to [N, C, H', W'] (autograd.AdaptiveAvgPool2D).
type AdaptiveAvgPool2D[T tensor.Float] struct{ H, W int }

// Forward records the pooling.
func (m AdaptiveAvgPool2D[T]) Forward(_ *autograd.Tape[T], x autograd.Var[T]) autograd.Var[T] {
	return autograd.AdaptiveAvgPool2D(x, m.H, m.W)
}

// Params returns nil: pooling has no parameters.
func (AdaptiveAvgPool2D[T]) Params() []*autograd.Param[T] { return nil }

// cmpOr returns a, or b when a is 0.
func cmpOr(a, b int) int {
	if a == 0 {
		return b
	}
	return a
}
