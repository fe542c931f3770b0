package layers

import (
	"math/rand/v2"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// ReLU is the module y = max(x, 0), elementwise.
type ReLU[T tensor.Float] struct{}

// Forward records max(x, 0).
func (ReLU[T]) Forward(_ *autograd.Tape[T], x autograd.Var[T]) autograd.Var[T] {
	return autograd.ReLU(x)
}

// Params returns nil: ReLU has no parameters.
func (ReLU[T]) Params() []*autograd.Param[T] { return nil }

// LeakyReLU is the module y = x where x > 0 and Slope·x elsewhere,
// elementwise (PyTorch's default slope is 0.01; the paper's initial-state
// net uses 0.3).
type LeakyReLU[T tensor.Float] struct {
	Slope T
}

// Forward records the leaky ReLU of x.
func (l LeakyReLU[T]) Forward(_ *autograd.Tape[T], x autograd.Var[T]) autograd.Var[T] {
	return autograd.LeakyReLU(x, l.Slope)
}

// Params returns nil: LeakyReLU has no parameters.
func (LeakyReLU[T]) Params() []*autograd.Param[T] { return nil }

// ELU is the module y = x where x > 0, α·(eˣ − 1) elsewhere, elementwise
// (PyTorch's nn.ELU; its default α is 1: set Alpha).
type ELU[T tensor.Float] struct {
	Alpha T
}

// Forward records the ELU of x.
func (l ELU[T]) Forward(_ *autograd.Tape[T], x autograd.Var[T]) autograd.Var[T] {
	return autograd.ELU(x, l.Alpha)
}

// Params returns nil: ELU has no parameters.
func (ELU[T]) Params() []*autograd.Param[T] { return nil }

// Tanh is the module y = tanh x, elementwise.
type Tanh[T tensor.Float] struct{}

// Forward records tanh x.
func (Tanh[T]) Forward(_ *autograd.Tape[T], x autograd.Var[T]) autograd.Var[T] {
	return autograd.Tanh(x)
}

// Params returns nil: Tanh has no parameters.
func (Tanh[T]) Params() []*autograd.Param[T] { return nil }

// Sigmoid is the module y = σ(x) = 1/(1 + e⁻ˣ), elementwise.
type Sigmoid[T tensor.Float] struct{}

// Forward records σ(x).
func (Sigmoid[T]) Forward(_ *autograd.Tape[T], x autograd.Var[T]) autograd.Var[T] {
	return autograd.Sigmoid(x)
}

// Params returns nil: Sigmoid has no parameters.
func (Sigmoid[T]) Params() []*autograd.Param[T] { return nil }

// Softplus is the module y = ln(1 + eˣ), elementwise (PyTorch's nn.Softplus
// with beta 1).
type Softplus[T tensor.Float] struct{}

// Forward records ln(1 + eˣ).
func (Softplus[T]) Forward(_ *autograd.Tape[T], x autograd.Var[T]) autograd.Var[T] {
	return autograd.Softplus(x)
}

// Params returns nil: Softplus has no parameters.
func (Softplus[T]) Params() []*autograd.Param[T] { return nil }

// Hardtanh is the module y = min(max(x, Min), Max), elementwise. PyTorch's
// default bounds are −1 and 1 (NewHardtanh); the zero value clamps to 0.
type Hardtanh[T tensor.Float] struct {
	Min, Max T
}

// NewHardtanh returns a Hardtanh with PyTorch's default bounds, −1 and 1.
func NewHardtanh[T tensor.Float]() Hardtanh[T] { return Hardtanh[T]{Min: -1, Max: 1} }

// Forward records x clamped to [Min, Max]. It panics if Min > Max.
func (h Hardtanh[T]) Forward(_ *autograd.Tape[T], x autograd.Var[T]) autograd.Var[T] {
	return autograd.Hardtanh(x, h.Min, h.Max)
}

// Params returns nil: Hardtanh has no parameters.
func (Hardtanh[T]) Params() []*autograd.Param[T] { return nil }

// Flatten is the module that views x [B, d1, d2, ...] as [B, d1·d2·…]
// (PyTorch's nn.Flatten with its default start_dim 1).
type Flatten[T tensor.Float] struct{}

// Forward records the flattened view of x.
func (Flatten[T]) Forward(_ *autograd.Tape[T], x autograd.Var[T]) autograd.Var[T] {
	return autograd.Flatten(x)
}

// Params returns nil: Flatten has no parameters.
func (Flatten[T]) Params() []*autograd.Param[T] { return nil }

// TimeConcat is the time-channel module of a time-dependent vector field:
// ForwardT(tp, t, x) appends to x [B, C, ...] one channel filled with t,
// giving [B, C+1, ...] (the "cat t" of the paper's f). Put it in a
// Sequential before each layer that should see the time, and run the
// Sequential with ForwardT.
//
// TimeConcat is a TimeModule and not a Module: it has no Forward, since
// without a time there is no channel to append. A Sequential holds it as
// a Layer; that Sequential's Forward panics, naming the child, and its
// ForwardT passes the time on.
type TimeConcat[T tensor.Float] struct{}

// ForwardT records x with a channel of value t appended.
func (TimeConcat[T]) ForwardT(_ *autograd.Tape[T], t float64, x autograd.Var[T]) autograd.Var[T] {
	return autograd.ConcatTime(x, T(t))
}

// Params returns nil: TimeConcat has no parameters.
func (TimeConcat[T]) Params() []*autograd.Param[T] { return nil }

// Dropout is PyTorch's nn.Dropout. In training mode (the initial mode) it
// zeroes each element independently with probability P and scales the
// others by 1/(1 − P), so that the expectation is unchanged:
//
//	y = x ⊙ m / (1 − P),  m[i] ~ Bernoulli(1 − P)   (y = 0 when P = 1)
//
// In evaluation mode, or with P = 0, it is the identity (Forward returns x
// itself). The masks come from the Dropout's own generator, so a run is
// reproducible from its seed; a Dropout is therefore not safe for
// concurrent use. Each training-mode Forward allocates its mask.
type Dropout[T tensor.Float] struct {
	p    float64
	rng  *rand.Rand
	eval bool
}

// NewDropout returns a Dropout in training mode that drops with
// probability p ∈ [0, 1], drawing its masks from rng. It panics if p is
// outside [0, 1] or rng is nil.
func NewDropout[T tensor.Float](p float64, rng *rand.Rand) *Dropout[T] {
	if !(p >= 0 && p <= 1) {
		panic(usage("NewDropout", "probability %v outside [0, 1]", p))
	}
	if rng == nil {
		panic(usage("NewDropout", "nil generator"))
	}
	return &Dropout[T]{p: p, rng: rng}
}

// P returns the drop probability.
func (d *Dropout[T]) P() float64 { return d.p }

// SetTraining sets training mode (true: drop) or evaluation mode (false:
// identity).
func (d *Dropout[T]) SetTraining(training bool) { d.eval = !training }

// Training reports whether d is in training mode.
func (d *Dropout[T]) Training() bool { return !d.eval }

// Forward records x ⊙ m/(1 − P) with a fresh mask in training mode, and
// returns x in evaluation mode.
func (d *Dropout[T]) Forward(tp *autograd.Tape[T], x autograd.Var[T]) autograd.Var[T] {
	if d.eval || d.p == 0 {
		return x
	}
	mask := tensor.New[T](x.Shape()...)
	if d.p < 1 {
		keep := T(1 / (1 - d.p))
		m := mask.Data()
		for i := range m {
			if d.rng.Float64() >= d.p {
				m[i] = keep
			}
		}
	}
	return autograd.Mul(x, tp.Const(mask))
}

// Params returns nil: Dropout has no parameters.
func (d *Dropout[T]) Params() []*autograd.Param[T] { return nil }
