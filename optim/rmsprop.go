package optim

import (
	"fmt"
	"math"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// RMSpropConfig holds the hyperparameters of RMSprop, named as
// torch.optim.RMSprop's. A field means what it says: 0 is 0 (see the
// package documentation). RMSpropDefaults returns torch's defaults. LR and
// Alpha must be > 0.
type RMSpropConfig struct {
	LR          float64 // learning rate η > 0
	Alpha       float64 // smoothing constant α > 0 of the squared-gradient average
	Eps         float64 // ε ≥ 0 added to the denominator
	Momentum    float64 // momentum factor μ ≥ 0 (0: none)
	Centered    bool    // divide by an estimate of the variance instead of the second moment
	WeightDecay float64 // L2 penalty λ ≥ 0, added to the gradient
}

// RMSpropDefaults returns torch.optim.RMSprop's defaults: lr 1e-2, alpha
// 0.99, eps 1e-8, no momentum, not centered, no weight decay.
func RMSpropDefaults() RMSpropConfig {
	return RMSpropConfig{LR: 1e-2, Alpha: 0.99, Eps: 1e-8}
}

// Validate reports whether NewRMSprop accepts the hyperparameters: a
// finite LR > 0, a finite Alpha > 0, and Eps, Momentum and WeightDecay
// finite and ≥ 0. The error names the field and its value. Alpha = 0 is
// refused: the average s would be the last squared gradient alone, which
// no one means, and a config written for the earlier rule, where a field
// left at 0 took torch's default, has it.
func (c RMSpropConfig) Validate() error {
	const kind, config = "rmsprop", "RMSpropConfig"
	if err := checkLRField(kind, config, c.LR, "RMSpropDefaults"); err != nil {
		return err
	}
	if !(c.Alpha >= 0) || math.IsInf(c.Alpha, 0) {
		return fieldError(kind, config, "Alpha", c.Alpha, "a finite Alpha > 0")
	}
	if c.Alpha == 0 {
		return fmt.Errorf("optim: %s: %s.Alpha = 0, want Alpha > 0: the average s would be the last squared gradient alone (a field means what it says, 0 is 0: if you meant torch's defaults, start from optim.RMSpropDefaults() and set the fields you change)", kind, config)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"Eps", c.Eps}, {"Momentum", c.Momentum}, {"WeightDecay", c.WeightDecay}} {
		if err := nonNegative(kind, config, f.name, f.v); err != nil {
			return err
		}
	}
	return nil
}

// RMSprop is the RMSprop optimizer (Hinton's lecture 6e) as
// torch.optim.RMSprop. At each step, for each parameter p with gradient g:
//
//	g ← g + λ·p                              (weight decay, if λ ≠ 0)
//	s ← α·s + (1 − α)·g²
//	d ← √s + ε                               (not centered)
//	a ← α·a + (1 − α)·g;  d ← √(s − a²) + ε  (centered)
//	b ← μ·b + g/d;  p ← p − η·b              (μ > 0)
//	p ← p − η·g/d                            (μ = 0)
//
// with s, a and b starting at zero. State: s ("square_avg"), b
// ("momentum_buffer", when μ > 0), a ("grad_avg", when centered) and the
// step count of each parameter (kept as torch does, though the update does
// not use it).
type RMSprop[T tensor.Float] struct {
	core[T]
	cfg        RMSpropConfig
	kMom, kAvg int // buffer indices of b and a, or -1
}

// NewRMSprop returns an RMSprop optimizer over params. It panics if the
// configuration is invalid (see RMSpropConfig.Validate) or a parameter name
// is empty or repeated.
func NewRMSprop[T tensor.Float](params []*autograd.Param[T], cfg RMSpropConfig) *RMSprop[T] {
	if err := cfg.Validate(); err != nil {
		panic(err.Error())
	}
	bufs := []string{"square_avg"}
	kMom, kAvg := -1, -1
	if cfg.Momentum > 0 {
		kMom = len(bufs)
		bufs = append(bufs, "momentum_buffer")
	}
	if cfg.Centered {
		kAvg = len(bufs)
		bufs = append(bufs, "grad_avg")
	}
	r := &RMSprop[T]{core: newCore("rmsprop", params, cfg.LR, bufs...), cfg: cfg, kMom: kMom, kAvg: kAvg}
	r.hyper = [][2]string{
		{"alpha", formatF(cfg.Alpha)},
		{"eps", formatF(cfg.Eps)},
		{"momentum", formatF(cfg.Momentum)},
		{"centered", fmt.Sprint(cfg.Centered)},
		{"weight_decay", formatF(cfg.WeightDecay)},
	}
	return r
}

// Config returns the hyperparameters in effect, with the current learning
// rate (which SetLR may have set to 0, a value NewRMSprop refuses).
func (r *RMSprop[T]) Config() RMSpropConfig {
	c := r.cfg
	c.LR = r.lr
	return c
}

// Step applies one RMSprop update to every parameter whose Grad is not nil.
func (r *RMSprop[T]) Step() {
	if r.dev.el != nil {
		for i := range r.params {
			if p, g, _, ok := r.gradTensors(i); ok {
				r.rmspropStep(i, p, g)
			}
		}
		return
	}
	lr, alpha, eps, mu, wd := r.lr, r.cfg.Alpha, r.cfg.Eps, r.cfg.Momentum, r.cfg.WeightDecay
	for i := range r.params {
		p, g, _, ok := r.grad(i)
		if !ok {
			continue
		}
		s := r.buf(0, i)[:len(p)]
		g = g[:len(p)]
		var b, a []T
		if r.kMom >= 0 {
			b = r.buf(r.kMom, i)[:len(p)]
		}
		if r.kAvg >= 0 {
			a = r.buf(r.kAvg, i)[:len(p)]
		}
		for j := range p {
			pj, d := float64(p[j]), float64(g[j])
			if wd != 0 {
				d += wd * pj
			}
			s[j] = T(alpha*float64(s[j]) + (1-alpha)*d*d)
			var den float64
			if a != nil {
				a[j] = T(alpha*float64(a[j]) + (1-alpha)*d)
				aj := float64(a[j])
				den = math.Sqrt(float64(s[j])-aj*aj) + eps
			} else {
				den = math.Sqrt(float64(s[j])) + eps
			}
			if b != nil {
				b[j] = T(mu*float64(b[j]) + d/den)
				p[j] = T(pj - lr*float64(b[j]))
			} else {
				p[j] = T(pj - lr*d/den)
			}
		}
	}
}
