package optim

import (
	"fmt"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// SGDConfig holds the hyperparameters of SGD, named as torch.optim.SGD's.
// A field means what it says: 0 is 0 (see the package documentation).
// SGDDefaults returns torch's defaults. LR must be > 0.
type SGDConfig struct {
	LR          float64 // learning rate η > 0
	Momentum    float64 // momentum factor μ ≥ 0 (0: plain SGD)
	Dampening   float64 // dampening τ of the momentum (0 with Nesterov)
	Nesterov    bool    // Nesterov momentum (needs μ > 0 and τ = 0)
	WeightDecay float64 // L2 penalty λ ≥ 0, added to the gradient
}

// SGDDefaults returns torch.optim.SGD's defaults: lr 1e-3, no momentum, no
// dampening, no weight decay.
func SGDDefaults() SGDConfig { return SGDConfig{LR: 1e-3} }

// Validate reports whether NewSGD accepts the hyperparameters: a finite
// LR > 0, Momentum and WeightDecay finite and ≥ 0, a finite Dampening, and
// Nesterov only with Momentum > 0 and Dampening 0. The error names the
// field and its value.
func (c SGDConfig) Validate() error {
	const kind, config = "sgd", "SGDConfig"
	if err := checkLRField(kind, config, c.LR, "SGDDefaults"); err != nil {
		return err
	}
	if err := nonNegative(kind, config, "Momentum", c.Momentum); err != nil {
		return err
	}
	if err := nonNegative(kind, config, "WeightDecay", c.WeightDecay); err != nil {
		return err
	}
	if isNaNOrInf(c.Dampening) {
		return fieldError(kind, config, "Dampening", c.Dampening, "a finite value")
	}
	if c.Nesterov && (c.Momentum <= 0 || c.Dampening != 0) {
		return fmt.Errorf("optim: sgd: SGDConfig.Nesterov requires Momentum > 0 and Dampening = 0 (have Momentum = %v, Dampening = %v)", c.Momentum, c.Dampening)
	}
	return nil
}

// SGD is stochastic gradient descent with optional momentum, as
// torch.optim.SGD. At step t, for each parameter p with gradient g:
//
//	g ← g + λ·p                         (weight decay, if λ ≠ 0)
//	if μ ≠ 0:
//	    b ← g                           (t = 1: the buffer starts at the first gradient)
//	    b ← μ·b + (1 − τ)·g             (t > 1)
//	    g ← g + μ·b   (Nesterov)   or   g ← b
//	p ← p − η·g
//
// State: the momentum buffer b ("momentum_buffer", when μ ≠ 0) and the
// step count of each parameter.
type SGD[T tensor.Float] struct {
	core[T]
	cfg SGDConfig
}

// NewSGD returns an SGD optimizer over params. It panics if the
// configuration is invalid (see SGDConfig.Validate) or a parameter name is
// empty or repeated.
func NewSGD[T tensor.Float](params []*autograd.Param[T], cfg SGDConfig) *SGD[T] {
	if err := cfg.Validate(); err != nil {
		panic(err.Error())
	}
	var bufs []string
	if cfg.Momentum != 0 {
		bufs = []string{"momentum_buffer"}
	}
	s := &SGD[T]{core: newCore("sgd", params, cfg.LR, bufs...), cfg: cfg}
	s.hyper = [][2]string{
		{"momentum", formatF(cfg.Momentum)},
		{"dampening", formatF(cfg.Dampening)},
		{"nesterov", fmt.Sprint(cfg.Nesterov)},
		{"weight_decay", formatF(cfg.WeightDecay)},
	}
	return s
}

// Config returns the hyperparameters in effect, with the current learning
// rate (which SetLR may have set to 0, a value NewSGD refuses).
func (s *SGD[T]) Config() SGDConfig {
	c := s.cfg
	c.LR = s.lr
	return c
}

// Step applies one SGD update to every parameter whose Grad is not nil.
func (s *SGD[T]) Step() {
	if s.dev.el != nil {
		for i := range s.params {
			if p, g, step, ok := s.gradTensors(i); ok {
				s.sgdStep(i, p, g, step)
			}
		}
		return
	}
	lr, mu, damp, wd := s.lr, s.cfg.Momentum, s.cfg.Dampening, s.cfg.WeightDecay
	for i := range s.params {
		p, g, step, ok := s.grad(i)
		if !ok {
			continue
		}
		var b []T
		if mu != 0 {
			b = s.buf(0, i)[:len(p)]
		}
		g = g[:len(p)]
		for j, pj := range p {
			d := float64(g[j])
			if wd != 0 {
				d += wd * float64(pj)
			}
			if mu != 0 {
				var bj float64
				if step == 1 {
					bj = d
				} else {
					bj = mu*float64(b[j]) + (1-damp)*d
				}
				b[j] = T(bj)
				bj = float64(b[j])
				if s.cfg.Nesterov {
					d += mu * bj
				} else {
					d = bj
				}
			}
			p[j] = T(float64(pj) - lr*d)
		}
	}
}
