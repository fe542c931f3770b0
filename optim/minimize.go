package optim

import (
	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// Minimize takes one step of opt on loss, recorded on tp: it zeroes the
// parameters' gradients, runs tp.Backward(loss), and steps if that
// succeeded — PyTorch's opt.zero_grad(); loss.backward(); opt.step() in
// one call. On Backward's error (a failed adjoint solve, or an error
// tp.Check remembered this pass) nothing is stepped, the partial gradients
// are zeroed again, and the error is returned. tp must then be Reset
// before the next pass, as after any Backward.
func Minimize[T tensor.Float](opt Optimizer[T], tp *autograd.Tape[T], loss autograd.Var[T]) error {
	opt.ZeroGrad()
	if err := tp.Backward(loss); err != nil {
		opt.ZeroGrad()
		return err
	}
	opt.Step()
	return nil
}

// WithLR returns c with the learning rate lr:
// optim.NewAdam(params, optim.AdamDefaults().WithLR(3e-4)).
func (c AdamConfig) WithLR(lr float64) AdamConfig { c.LR = lr; return c }

// WithLR returns c with the learning rate lr.
func (c SGDConfig) WithLR(lr float64) SGDConfig { c.LR = lr; return c }

// WithLR returns c with the learning rate lr.
func (c RMSpropConfig) WithLR(lr float64) RMSpropConfig { c.LR = lr; return c }
