package odeblock

import (
	"fmt"

	"github.com/adamnode/adamnode/internal/modename"

	"github.com/adamnode/adamnode/tensor"
)

// GradMode is how a Block computes its gradients: Adjoint{…} (the
// default, when Block.Mode is nil), Backprop{}, Checkpoint{},
// Recursive{…} or Interpolated{…}. The model code is the same in every mode, and every mode
// returns the parameters' gradients the same way: through the block's node
// on the tape, so a block inside an autograd.Pullback, or inside another
// block's dynamics, puts them where the outer pass asks.
//
// Each mode is a value of its own type, complete in its own file; they
// share the Runge–Kutta stepper, so a recomputed stage is the forward's to
// the bit.
type GradMode interface {
	// String returns the mode's name, as ParseGradMode reads it.
	String() string
	// validate reports the first option out of range.
	validate() error
	// strategy32 and strategy64 return the mode at work on one pass.
	strategy32(p *pass[float32]) strategy[float32]
	strategy64(p *pass[float64]) strategy[float64]
	// stepsOnly returns the mode that runs in its stead with a method
	// whose steps are not explicit RK stages (the stiff, implicit and
	// Adams methods): itself, or Interpolated for the modes that
	// differentiate RK steps.
	stepsOnly() GradMode
}

// strategy is a gradient mode at work on one pass of a Block: it decides
// what the forward solve keeps, and computes the gradients from it.
type strategy[T tensor.Float] interface {
	// stepEnds reports whether every output time must be a step end.
	stepEnds() bool
	// forward returns the hook called after each attempted step of the
	// forward solve (nil: none), which keeps what the backward pass needs.
	// The solve evaluates the dynamics without gradients
	// (pass.tensorEvaluator), or forwardTensors' function where the
	// strategy has one (tensorForwarder).
	forward() func(StepInfo[T]) error
	// forwardOnDevice reports whether the forward solve may run on a
	// device (integrate's device mode): the hook then reads the step's
	// states as tensors (StepInfo.State1 when StepInfo.Y1 is nil) and
	// nothing else of the solver's.
	forwardOnDevice() bool
	// abort gives back what a failed forward solve kept.
	abort()
	// backward returns the gradients of z0 and of each parameter from
	// g = ∂L/∂z at every output time, [len(Times), n].
	backward(g *tensor.Tensor[T]) ([]*tensor.Tensor[T], error)
}

// newStrategy returns mode m at work on pass p.
func newStrategy[T tensor.Float](m GradMode, p *pass[T]) (strategy[T], error) {
	switch p := any(p).(type) {
	case *pass[float32]:
		return any(m.strategy32(p)).(strategy[T]), nil
	case *pass[float64]:
		return any(m.strategy64(p)).(strategy[T]), nil
	}
	var zero T
	return nil, fmt.Errorf("odeblock: gradient mode %v: element type %T is neither float32 nor float64", m, zero)
}

// modeByName holds each mode's default value, by name; each mode's file
// registers its own.
var modeByName = modename.Set[GradMode]{}

func registerMode(m GradMode) { modeByName.Add(m) }

// ParseGradMode returns the mode of that name with its default options:
// "adjoint", "backprop", "checkpoint", "interpolated" or "recursive".
func ParseGradMode(s string) (GradMode, error) { return modeByName.Parse("odeblock", s) }

// GradModeNames returns the names ParseGradMode accepts, sorted.
func GradModeNames() []string { return modeByName.Names() }
