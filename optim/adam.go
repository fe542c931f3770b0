package optim

import (
	"fmt"
	"math"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// AdamConfig holds the hyperparameters of Adam and AdamW, named as
// torch.optim.Adam's. A field means what it says: 0 is 0 (see the package
// documentation), so AdamConfig{LR: 1e-4, Beta1: 0, Beta2: 0.9} is Adam
// with betas (0, 0.9) and no ε. AdamDefaults and AdamWDefaults return
// torch's defaults. LR and Beta2 must be > 0.
type AdamConfig struct {
	LR          float64 // learning rate η > 0
	Beta1       float64 // decay β₁ ∈ [0, 1) of the first moment
	Beta2       float64 // decay β₂ ∈ (0, 1) of the second moment
	Eps         float64 // ε ≥ 0 added to the denominator
	WeightDecay float64 // λ ≥ 0: an L2 penalty for Adam, decoupled decay for AdamW
}

// AdamDefaults returns torch.optim.Adam's defaults: lr 1e-3, betas
// (0.9, 0.999), eps 1e-8, no weight decay.
func AdamDefaults() AdamConfig {
	return AdamConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
}

// AdamWDefaults returns torch.optim.AdamW's defaults: those of Adam with
// weight decay 1e-2.
func AdamWDefaults() AdamConfig {
	c := AdamDefaults()
	c.WeightDecay = 1e-2
	return c
}

// Validate reports whether NewAdam accepts the hyperparameters (NewAdamW
// accepts the same): a finite LR > 0, 0 ≤ Beta1 < 1, 0 < Beta2 < 1, and
// Eps and WeightDecay finite and ≥ 0. The error names the field and its
// value. Beta2 = 0 is refused: v would be the last squared gradient alone,
// which no one means, and a config written for the earlier rule, where a
// field left at 0 took torch's default, has it.
func (c AdamConfig) Validate() error { return c.validate(false) }

// validate is Validate, its errors naming AdamW and its defaults if
// decoupled.
func (c AdamConfig) validate(decoupled bool) error {
	kind, defaults := "adam", "AdamDefaults"
	if decoupled {
		kind, defaults = "adamw", "AdamWDefaults"
	}
	const config = "AdamConfig"
	if err := checkLRField(kind, config, c.LR, defaults); err != nil {
		return err
	}
	if !(c.Beta1 >= 0 && c.Beta1 < 1) {
		return fieldError(kind, config, "Beta1", c.Beta1, "0 ≤ Beta1 < 1")
	}
	if !(c.Beta2 >= 0 && c.Beta2 < 1) {
		return fieldError(kind, config, "Beta2", c.Beta2, "0 < Beta2 < 1")
	}
	if c.Beta2 == 0 {
		return fmt.Errorf("optim: %s: %s.Beta2 = 0, want 0 < Beta2 < 1: the second moment v would be the last squared gradient alone (a field means what it says, 0 is 0: if you meant torch's defaults, start from optim.%s() and set the fields you change)", kind, config, defaults)
	}
	if err := nonNegative(kind, config, "Eps", c.Eps); err != nil {
		return err
	}
	return nonNegative(kind, config, "WeightDecay", c.WeightDecay)
}

// Adam is the Adam optimizer (Kingma & Ba 2015) as torch.optim.Adam
// (amsgrad off). At step t, for each parameter p with gradient g:
//
//	g ← g + λ·p                                   (L2 weight decay, if λ ≠ 0)
//	m ← β₁·m + (1 − β₁)·g
//	v ← β₂·v + (1 − β₂)·g²
//	p ← p − (η / (1 − β₁ᵗ)) · m / (√v / √(1 − β₂ᵗ) + ε)
//
// with m and v starting at zero: ε is added after the square root of the
// bias-corrected second moment. State: m ("exp_avg"), v ("exp_avg_sq") and
// the step count t of each parameter.
type Adam[T tensor.Float] struct {
	core[T]
	cfg       AdamConfig
	decoupled bool // AdamW
}

// NewAdam returns an Adam optimizer over params. It panics if the
// configuration is invalid (see AdamConfig.Validate) or a parameter name is
// empty or repeated.
func NewAdam[T tensor.Float](params []*autograd.Param[T], cfg AdamConfig) *Adam[T] {
	return newAdam(params, cfg, false)
}

// AdamW is Adam with decoupled weight decay (Loshchilov & Hutter 2019), as
// torch.optim.AdamW. It is an Adam whose step first decays the parameter and
// adds no L2 term to the gradient:
//
//	p ← p·(1 − η·λ)
//	m ← β₁·m + (1 − β₁)·g
//	v ← β₂·v + (1 − β₂)·g²
//	p ← p − (η / (1 − β₁ᵗ)) · m / (√v / √(1 − β₂ᵗ) + ε)
//
// Its state is named "adamw" (optim.adamw.exp_avg.<param>, ...).
type AdamW[T tensor.Float] = Adam[T]

// NewAdamW returns an AdamW optimizer over params (an Adam with decoupled
// weight decay). It panics if the configuration is invalid (see
// AdamConfig.Validate) or a parameter name is empty or repeated. The weight
// decay is cfg.WeightDecay, 0 included: AdamWDefaults has torch's 1e-2.
func NewAdamW[T tensor.Float](params []*autograd.Param[T], cfg AdamConfig) *AdamW[T] {
	return newAdam(params, cfg, true)
}

func newAdam[T tensor.Float](params []*autograd.Param[T], cfg AdamConfig, decoupled bool) *Adam[T] {
	kind := "adam"
	if decoupled {
		kind = "adamw"
	}
	if err := cfg.validate(decoupled); err != nil {
		panic(err.Error())
	}
	a := &Adam[T]{core: newCore(kind, params, cfg.LR, "exp_avg", "exp_avg_sq"), cfg: cfg, decoupled: decoupled}
	a.hyper = [][2]string{
		{"beta1", formatF(cfg.Beta1)},
		{"beta2", formatF(cfg.Beta2)},
		{"eps", formatF(cfg.Eps)},
		{"weight_decay", formatF(cfg.WeightDecay)},
	}
	return a
}

// Decoupled reports whether the weight decay is decoupled (AdamW).
func (a *Adam[T]) Decoupled() bool { return a.decoupled }

// Config returns the hyperparameters in effect, with the current learning
// rate (which SetLR may have set to 0, a value NewAdam refuses).
func (a *Adam[T]) Config() AdamConfig {
	c := a.cfg
	c.LR = a.lr
	return c
}

// Step applies one Adam (or AdamW) update to every parameter whose Grad is
// not nil.
func (a *Adam[T]) Step() {
	if a.dev.el != nil {
		for i := range a.params {
			if p, g, step, ok := a.gradTensors(i); ok {
				a.adamStep(i, p, g, step)
			}
		}
		return
	}
	lr, b1, b2, eps, wd := a.lr, a.cfg.Beta1, a.cfg.Beta2, a.cfg.Eps, a.cfg.WeightDecay
	for i := range a.params {
		p, g, step, ok := a.grad(i)
		if !ok {
			continue
		}
		m, v := a.buf(0, i)[:len(p)], a.buf(1, i)[:len(p)]
		g = g[:len(p)]
		t := float64(step)
		stepSize := lr / (1 - math.Pow(b1, t))
		sqrtBC2 := math.Sqrt(1 - math.Pow(b2, t))
		decay := 1 - lr*wd
		for j := range p {
			pj, d := float64(p[j]), float64(g[j])
			if a.decoupled {
				pj = float64(T(pj * decay))
			} else if wd != 0 {
				d += wd * pj
			}
			m[j] = T(b1*float64(m[j]) + (1-b1)*d)
			v[j] = T(b2*float64(v[j]) + (1-b2)*d*d)
			denom := math.Sqrt(float64(v[j]))/sqrtBC2 + eps
			p[j] = T(pj - stepSize*float64(m[j])/denom)
		}
	}
}

func isNaNOrInf(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }
