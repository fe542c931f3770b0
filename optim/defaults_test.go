package optim

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// configOf returns opt.Config() of any of the optimizers.
func configOf(t *testing.T, opt Optimizer[float64]) any {
	t.Helper()
	switch o := opt.(type) {
	case *SGD[float64]:
		return o.Config()
	case *Adam[float64]:
		return o.Config()
	case *RMSprop[float64]:
		return o.Config()
	}
	t.Fatalf("no Config for %T", opt)
	return nil
}

// remake makes a fresh optimizer of opt's kind from opt.Config().
func remake(t *testing.T, opt Optimizer[float64], ps []*autograd.Param[float64]) Optimizer[float64] {
	t.Helper()
	switch o := opt.(type) {
	case *SGD[float64]:
		return NewSGD(ps, o.Config())
	case *Adam[float64]:
		if o.Decoupled() {
			return NewAdamW(ps, o.Config())
		}
		return NewAdam(ps, o.Config())
	case *RMSprop[float64]:
		return NewRMSprop(ps, o.Config())
	}
	t.Fatalf("cannot remake %T", opt)
	return nil
}

// hyperMeta returns the metadata of opt's state without the step counts:
// its type, learning rate and hyperparameters as StateDict writes them.
func hyperMeta(t *testing.T, opt Optimizer[float64]) map[string]string {
	t.Helper()
	_, meta, err := opt.StateDict()
	if err != nil {
		t.Fatal(err)
	}
	for k := range meta {
		if strings.Contains(k, ".step.") {
			delete(meta, k)
		}
	}
	return meta
}

// TestDefaultsAreTorch checks the Defaults functions against torch.optim's
// documented defaults (PyTorch 2.x): SGD(lr=1e-3, momentum=0, dampening=0,
// weight_decay=0, nesterov=False); Adam(lr=1e-3, betas=(0.9, 0.999),
// eps=1e-8, weight_decay=0); AdamW the same with weight_decay=1e-2;
// RMSprop(lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
// centered=False). Each is a valid config.
func TestDefaultsAreTorch(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want any
		valid     error
	}{
		{"sgd", SGDDefaults(), SGDConfig{LR: 1e-3}, SGDDefaults().Validate()},
		{"adam", AdamDefaults(), AdamConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}, AdamDefaults().Validate()},
		{"adamw", AdamWDefaults(), AdamConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-2}, AdamWDefaults().validate(true)},
		{"rmsprop", RMSpropDefaults(), RMSpropConfig{LR: 1e-2, Alpha: 0.99, Eps: 1e-8}, RMSpropDefaults().Validate()},
	} {
		if diff := cmp.Diff(tc.want, tc.got); diff != "" {
			t.Errorf("%s defaults (-torch +got):\n%s", tc.name, diff)
		}
		if tc.valid != nil {
			t.Errorf("%s defaults refused: %v", tc.name, tc.valid)
		}
	}
}

// TestZeroMeansZero checks, field by field, that a hyperparameter set to 0
// is 0 in the update, where the earlier rule put torch's default: each
// case starts from the Defaults (or a literal), sets the field to 0, and
// takes steps from p0 with gradients g₁ = [0.5, −1], g₂ = [0.25, 2], each
// checked against the update rule worked by hand with that field 0.
func TestZeroMeansZero(t *testing.T) {
	adam := func(lr float64, set func(*AdamConfig)) AdamConfig {
		c := AdamDefaults()
		c.LR = lr
		set(&c)
		return c
	}
	// Adam at lr 0.1 with β₂ = 0.999 and g₁, g₂: v₁ = 0.001·g₁²,
	// v₂ = [0.00031225, 0.004999], 1 − β₂² = 0.001999; step 1's √v̂ is |g₁|.
	sqrtVhat2 := []float64{math.Sqrt(0.00031225 / 0.001999), math.Sqrt(0.004999 / 0.001999)}
	adamStep1 := []float64{1 - 0.1*0.5/(0.5+eps8), -2 + 0.1*1/(1+eps8)} // m̂₁ = g₁, ε = 1e-8
	// RMSprop at lr 0.1, α = 0.99: s₁ = 0.01·g₁², √s₁ = 0.1·|g₁|;
	// s₂ = 0.99·s₁ + 0.01·g₂² = [0.0031, 0.0499].
	rmsDen1 := []float64{0.05 + eps8, 0.1 + eps8}
	rmsDen2 := []float64{math.Sqrt(0.0031) + eps8, math.Sqrt(0.0499) + eps8}
	rmsStep1 := []float64{1 - 0.1*0.5/rmsDen1[0], -2 + 0.1*1/rmsDen1[1]}
	rmsB1 := []float64{0.5 / rmsDen1[0], -1 / rmsDen1[1]} // momentum buffer after step 1
	for _, tc := range []struct {
		name string
		make func([]*autograd.Param[float64]) Optimizer[float64]
		want [][]float64 // p after each step
	}{
		{
			// p ← p − 0.1·g
			name: "sgd momentum 0",
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] { return NewSGD(ps, SGDConfig{LR: 0.1}) },
			want: [][]float64{{0.95, -1.9}, {0.925, -2.1}},
		},
		{
			// b₁ = g₁; b₂ = 0.9·g₁ + (1 − 0)·g₂ = [0.7, 1.1]
			name: "sgd dampening 0",
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				return NewSGD(ps, SGDConfig{LR: 0.1, Momentum: 0.9, Dampening: 0})
			},
			want: [][]float64{{0.95, -1.9}, {0.88, -2.01}},
		},
		{
			// b₁ = g₁; b₂ = 0.9·g₁ + 0.5·g₂ = [0.575, 0.1], no λ·p added
			name: "sgd weight decay 0",
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				return NewSGD(ps, SGDConfig{LR: 0.1, Momentum: 0.9, Dampening: 0.5, WeightDecay: 0})
			},
			want: [][]float64{{0.95, -1.9}, {0.8925, -1.91}},
		},
		{
			// β₁ = 0: m = g and 1 − β₁ᵗ = 1, so m̂₂ = g₂ (β₁ = 0.9 would give
			// m̂₂ = [0.07, 0.11]/0.19).
			name: "adam beta1 0",
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				return NewAdam(ps, adam(0.1, func(c *AdamConfig) { c.Beta1 = 0 }))
			},
			want: [][]float64{adamStep1, {
				adamStep1[0] - 0.1*0.25/(sqrtVhat2[0]+eps8),
				adamStep1[1] - 0.1*2/(sqrtVhat2[1]+eps8),
			}},
		},
		{
			// ε = 0: step 1 moves each element by exactly lr·sign(g₁).
			name: "adam eps 0",
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				return NewAdam(ps, adam(0.1, func(c *AdamConfig) { c.Eps = 0 }))
			},
			want: [][]float64{{0.9, -1.9}},
		},
		{
			// λ = 0: torch's Adam at lr 0.1 (m₂ = [0.07, 0.11], 1 − β₁² = 0.19);
			// an L2 term would change g₂ and so step 2.
			name: "adam weight decay 0",
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				return NewAdam(ps, adam(0.1, func(c *AdamConfig) { c.WeightDecay = 0 }))
			},
			want: [][]float64{adamStep1, {
				adamStep1[0] - 0.1*(0.07/0.19)/(sqrtVhat2[0]+eps8),
				adamStep1[1] - 0.1*(0.11/0.19)/(sqrtVhat2[1]+eps8),
			}},
		},
		{
			// What code written for the earlier rule gets: β₁ = 0, ε = 0.
			name: "adam literal with lr and beta2 only",
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				return NewAdam(ps, AdamConfig{LR: 0.1, Beta2: 0.999})
			},
			want: [][]float64{{0.9, -1.9}, {0.9 - 0.1*0.25/sqrtVhat2[0], -1.9 - 0.1*2/sqrtVhat2[1]}},
		},
		{
			// Deprecated Zero is 0: as "adam eps 0".
			name: "adam eps Zero",
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				return NewAdam(ps, adam(0.1, func(c *AdamConfig) { c.Eps = Zero }))
			},
			want: [][]float64{{0.9, -1.9}},
		},
		{
			// No decay: p ← p − lr·g/(|g| + 1e-8), Adam's first step (torch's
			// default 1e-2 would first scale p by 1 − 0.1·0.01).
			name: "adamw weight decay 0",
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				c := AdamWDefaults()
				c.LR, c.WeightDecay = 0.1, 0
				return NewAdamW(ps, c)
			},
			want: [][]float64{adamStep1},
		},
		{
			// The decay of AdamWDefaults' 1e-2: p ← p·(1 − 0.1·0.01) first.
			name: "adamw weight decay default",
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				c := AdamWDefaults()
				c.LR = 0.1
				return NewAdamW(ps, c)
			},
			want: [][]float64{{1*0.999 - 0.1*0.5/(0.5+eps8), -2*0.999 + 0.1*1/(1+eps8)}},
		},
		{
			// ε = 0: p ← p − 0.1·g₁/(0.1·|g₁|) = p − sign(g₁).
			name: "rmsprop eps 0",
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				c := RMSpropDefaults()
				c.LR, c.Eps = 0.1, 0
				return NewRMSprop(ps, c)
			},
			want: [][]float64{{0, -1}},
		},
		{
			// μ = 0: p ← p − 0.1·g/(√s + ε) each step, no buffer carried over.
			name: "rmsprop momentum 0",
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				c := RMSpropDefaults()
				c.LR, c.Momentum = 0.1, 0
				return NewRMSprop(ps, c)
			},
			want: [][]float64{rmsStep1, {rmsStep1[0] - 0.1*0.25/rmsDen2[0], rmsStep1[1] - 0.1*2/rmsDen2[1]}},
		},
		{
			// λ = 0 with μ = 0.5: b₂ = 0.5·b₁ + g₂/(√s₂ + ε), no λ·p in g.
			name: "rmsprop weight decay 0",
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				c := RMSpropDefaults()
				c.LR, c.Momentum, c.WeightDecay = 0.1, 0.5, 0
				return NewRMSprop(ps, c)
			},
			want: [][]float64{rmsStep1, {
				rmsStep1[0] - 0.1*(0.5*rmsB1[0]+0.25/rmsDen2[0]),
				rmsStep1[1] - 0.1*(0.5*rmsB1[1]+2/rmsDen2[1]),
			}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newParam[float64]("w", p0)
			opt := tc.make([]*autograd.Param[float64]{p})
			for k, want := range tc.want {
				setGrad(p, [][]float64{g1, g2}[k])
				opt.Step()
				if diff := cmp.Diff(want, p.Value.Data(), cmpopts.EquateApprox(1e-14, 1e-15)); diff != "" {
					t.Errorf("p after step %d (-want +got):\n%s", k+1, diff)
				}
			}
		})
	}
}

// TestAdamDefaultsIsTorch checks two steps of AdamDefaults(), what
// torch.optim.Adam(params) is, against torch's rule worked by hand with lr
// 1e-3, betas (0.9, 0.999) and eps 1e-8 (the numbers of the "adam" case of
// TestStepRules, at lr 1e-3):
//
//	step 1: m̂ = g₁, √v̂ = |g₁|:          p = p0 − 1e-3·g₁/(|g₁| + 1e-8)
//	step 2: m = [0.07, 0.11], v = [0.00031225, 0.004999],
//	        1 − β₁² = 0.19, 1 − β₂² = 0.001999
func TestAdamDefaultsIsTorch(t *testing.T) {
	step1 := []float64{1 - 1e-3*0.5/(0.5+1e-8), -2 + 1e-3*1/(1+1e-8)}
	step2 := []float64{
		step1[0] - 1e-3*(0.07/0.19)/(math.Sqrt(0.00031225/0.001999)+1e-8),
		step1[1] - 1e-3*(0.11/0.19)/(math.Sqrt(0.004999/0.001999)+1e-8),
	}
	p := newParam[float64]("w", p0)
	opt := NewAdam([]*autograd.Param[float64]{p}, AdamDefaults())
	for k, want := range [][]float64{step1, step2} {
		setGrad(p, [][]float64{g1, g2}[k])
		opt.Step()
		if diff := cmp.Diff(want, p.Value.Data(), cmpopts.EquateApprox(1e-14, 0)); diff != "" {
			t.Errorf("p after step %d (-want +got):\n%s", k+1, diff)
		}
	}
}

// TestRefusedConfigs checks that each constructor panics on a config it
// cannot mean, with a message naming the field and its value, and for the
// configs that code written for the earlier rule (0: torch's default)
// produces, the Defaults function to start from; Validate returns the same
// message (NewAdamW's names AdamW and AdamWDefaults).
func TestRefusedConfigs(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	const lastSq = "the last squared gradient alone"
	for _, tc := range []struct {
		name  string
		cfg   any // SGDConfig, AdamConfig or RMSpropConfig
		adamW bool
		want  []string
	}{
		{"sgd lr 0, as SGDConfig{Momentum: 0.9}", SGDConfig{Momentum: 0.9}, false, []string{"optim: sgd: SGDConfig.LR = 0,", "optim.SGDDefaults()", "SetLR(0)"}},
		{"sgd negative lr", SGDConfig{LR: -1}, false, []string{"SGDConfig.LR = -1,"}},
		{"sgd lr Zero's old value", SGDConfig{LR: -math.SmallestNonzeroFloat64}, false, []string{"SGDConfig.LR = -5e-324,"}},
		{"sgd NaN lr", SGDConfig{LR: nan}, false, []string{"SGDConfig.LR = NaN,"}},
		{"sgd infinite lr", SGDConfig{LR: inf}, false, []string{"SGDConfig.LR = +Inf,"}},
		{"sgd negative momentum", SGDConfig{LR: 0.1, Momentum: -0.1}, false, []string{"SGDConfig.Momentum = -0.1,"}},
		{"sgd infinite momentum", SGDConfig{LR: 0.1, Momentum: inf}, false, []string{"SGDConfig.Momentum = +Inf,"}},
		{"sgd negative weight decay", SGDConfig{LR: 0.1, WeightDecay: -1}, false, []string{"SGDConfig.WeightDecay = -1,"}},
		{"sgd NaN weight decay", SGDConfig{LR: 0.1, WeightDecay: nan}, false, []string{"SGDConfig.WeightDecay = NaN,"}},
		{"sgd NaN dampening", SGDConfig{LR: 0.1, Dampening: nan}, false, []string{"SGDConfig.Dampening = NaN,"}},
		{"sgd infinite dampening", SGDConfig{LR: 0.1, Dampening: -inf}, false, []string{"SGDConfig.Dampening = -Inf,"}},
		{"sgd nesterov without momentum", SGDConfig{LR: 0.1, Nesterov: true}, false, []string{"SGDConfig.Nesterov", "Momentum = 0,"}},
		{"sgd nesterov with dampening", SGDConfig{LR: 0.1, Momentum: 0.9, Dampening: 0.1, Nesterov: true}, false, []string{"SGDConfig.Nesterov", "Dampening = 0.1)"}},

		{"adam lr 0, as AdamConfig{}", AdamConfig{}, false, []string{"optim: adam: AdamConfig.LR = 0,", "optim.AdamDefaults()"}},
		{"adam infinite lr", AdamConfig{LR: inf, Beta1: 0.9, Beta2: 0.999}, false, []string{"AdamConfig.LR = +Inf,"}},
		{"adam beta2 0, as AdamConfig{LR: 1e-3}", AdamConfig{LR: 1e-3}, false, []string{"optim: adam: AdamConfig.Beta2 = 0,", lastSq, "optim.AdamDefaults()"}},
		{"adam beta1 1", AdamConfig{LR: 0.1, Beta1: 1, Beta2: 0.9}, false, []string{"AdamConfig.Beta1 = 1,", "0 ≤ Beta1 < 1"}},
		{"adam negative beta1", AdamConfig{LR: 0.1, Beta1: -0.1, Beta2: 0.9}, false, []string{"AdamConfig.Beta1 = -0.1,"}},
		{"adam NaN beta1", AdamConfig{LR: 0.1, Beta1: nan, Beta2: 0.9}, false, []string{"AdamConfig.Beta1 = NaN,"}},
		{"adam beta2 1", AdamConfig{LR: 0.1, Beta1: 0.9, Beta2: 1}, false, []string{"AdamConfig.Beta2 = 1,", "0 < Beta2 < 1"}},
		{"adam negative beta2", AdamConfig{LR: 0.1, Beta1: 0.9, Beta2: -0.1}, false, []string{"AdamConfig.Beta2 = -0.1,"}},
		{"adam negative eps", AdamConfig{LR: 0.1, Beta1: 0.9, Beta2: 0.9, Eps: -1}, false, []string{"AdamConfig.Eps = -1,"}},
		{"adam infinite eps", AdamConfig{LR: 0.1, Beta1: 0.9, Beta2: 0.9, Eps: inf}, false, []string{"AdamConfig.Eps = +Inf,"}},
		{"adam negative weight decay", AdamConfig{LR: 0.1, Beta1: 0.9, Beta2: 0.9, WeightDecay: -1}, false, []string{"AdamConfig.WeightDecay = -1,"}},
		{"adamw lr 0, as AdamConfig{}", AdamConfig{}, true, []string{"optim: adamw: AdamConfig.LR = 0,", "optim.AdamWDefaults()"}},
		{"adamw beta2 0, as AdamConfig{LR: 1e-3}", AdamConfig{LR: 1e-3}, true, []string{"optim: adamw: AdamConfig.Beta2 = 0,", lastSq, "optim.AdamWDefaults()"}},
		{"adamw negative weight decay", AdamConfig{LR: 0.1, Beta1: 0.9, Beta2: 0.9, WeightDecay: -1}, true, []string{"optim: adamw: AdamConfig.WeightDecay = -1,"}},

		{"rmsprop lr 0, as RMSpropConfig{Momentum: 0.9}", RMSpropConfig{Momentum: 0.9}, false, []string{"optim: rmsprop: RMSpropConfig.LR = 0,", "optim.RMSpropDefaults()"}},
		{"rmsprop alpha 0, as RMSpropConfig{LR: 1e-3}", RMSpropConfig{LR: 1e-3}, false, []string{"optim: rmsprop: RMSpropConfig.Alpha = 0,", lastSq, "optim.RMSpropDefaults()"}},
		{"rmsprop negative alpha", RMSpropConfig{LR: 0.1, Alpha: -0.5}, false, []string{"RMSpropConfig.Alpha = -0.5,", "Alpha > 0"}},
		{"rmsprop infinite alpha", RMSpropConfig{LR: 0.1, Alpha: inf}, false, []string{"RMSpropConfig.Alpha = +Inf,"}},
		{"rmsprop negative eps", RMSpropConfig{LR: 0.1, Alpha: 0.99, Eps: -1}, false, []string{"RMSpropConfig.Eps = -1,"}},
		{"rmsprop negative momentum", RMSpropConfig{LR: 0.1, Alpha: 0.99, Momentum: -1}, false, []string{"RMSpropConfig.Momentum = -1,"}},
		{"rmsprop infinite momentum", RMSpropConfig{LR: 0.1, Alpha: 0.99, Momentum: inf}, false, []string{"RMSpropConfig.Momentum = +Inf,"}},
		{"rmsprop negative weight decay", RMSpropConfig{LR: 0.1, Alpha: 0.99, WeightDecay: -1}, false, []string{"RMSpropConfig.WeightDecay = -1,"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := []*autograd.Param[float64]{newParam[float64]("w", p0)}
			var build func()
			var err error
			switch c := tc.cfg.(type) {
			case SGDConfig:
				build, err = func() { NewSGD(ps, c) }, c.Validate()
			case AdamConfig:
				build, err = func() { NewAdam(ps, c) }, c.Validate()
				if tc.adamW {
					build, err = func() { NewAdamW(ps, c) }, c.validate(true)
				}
			case RMSpropConfig:
				build, err = func() { NewRMSprop(ps, c) }, c.Validate()
			}
			msg := panicOf(build)
			if msg == "" {
				t.Fatalf("made an optimizer from %+v", tc.cfg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("panic %q does not say %q", msg, w)
				}
			}
			if err == nil || err.Error() != msg {
				t.Errorf("Validate: %v, want the panic's message %q", err, msg)
			}
		})
	}
}

// panicOf returns what f panics with, printed, or "" if it returns.
func panicOf(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

// TestConfigReportsValues checks that an optimizer's Config is the config
// it was made with, zeros as zeros, with the current learning rate; that
// the state's metadata says the same; and that the config given back makes
// the same optimizer.
func TestConfigReportsValues(t *testing.T) {
	for _, tc := range []struct {
		name   string
		make   func([]*autograd.Param[float64]) Optimizer[float64]
		config any               // want Config()
		meta   map[string]string // want the state's metadata, step counts aside
	}{
		{
			name:   "adam defaults", // torch.optim.Adam(params)
			make:   func(ps []*autograd.Param[float64]) Optimizer[float64] { return NewAdam(ps, AdamDefaults()) },
			config: AdamConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8},
			meta:   map[string]string{"optim.type": "adam", "optim.adam.lr": "0.001", "optim.adam.beta1": "0.9", "optim.adam.beta2": "0.999", "optim.adam.eps": "1e-08", "optim.adam.weight_decay": "0"},
		},
		{
			name: "adam beta1 and eps 0", // torch.optim.Adam(params, lr=1e-4, betas=(0, 0.9), eps=0)
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				return NewAdam(ps, AdamConfig{LR: 1e-4, Beta2: 0.9})
			},
			config: AdamConfig{LR: 1e-4, Beta2: 0.9},
			meta:   map[string]string{"optim.type": "adam", "optim.adam.lr": "0.0001", "optim.adam.beta1": "0", "optim.adam.beta2": "0.9", "optim.adam.eps": "0", "optim.adam.weight_decay": "0"},
		},
		{
			name: "adam eps the smallest positive", // torch.optim.Adam(params, eps=5e-324)
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				c := AdamDefaults()
				c.Eps = math.SmallestNonzeroFloat64
				return NewAdam(ps, c)
			},
			config: AdamConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: math.SmallestNonzeroFloat64},
			meta:   map[string]string{"optim.type": "adam", "optim.adam.lr": "0.001", "optim.adam.beta1": "0.9", "optim.adam.beta2": "0.999", "optim.adam.eps": "5e-324", "optim.adam.weight_decay": "0"},
		},
		{
			name:   "adamw defaults", // torch.optim.AdamW(params)
			make:   func(ps []*autograd.Param[float64]) Optimizer[float64] { return NewAdamW(ps, AdamWDefaults()) },
			config: AdamConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-2},
			meta:   map[string]string{"optim.type": "adamw", "optim.adamw.lr": "0.001", "optim.adamw.beta1": "0.9", "optim.adamw.beta2": "0.999", "optim.adamw.eps": "1e-08", "optim.adamw.weight_decay": "0.01"},
		},
		{
			name: "adamw weight decay 0", // torch.optim.AdamW(params, weight_decay=0)
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				return NewAdamW(ps, AdamConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
			},
			config: AdamConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8},
			meta:   map[string]string{"optim.type": "adamw", "optim.adamw.lr": "0.001", "optim.adamw.beta1": "0.9", "optim.adamw.beta2": "0.999", "optim.adamw.eps": "1e-08", "optim.adamw.weight_decay": "0"},
		},
		{
			name:   "sgd defaults", // torch.optim.SGD(params)
			make:   func(ps []*autograd.Param[float64]) Optimizer[float64] { return NewSGD(ps, SGDDefaults()) },
			config: SGDConfig{LR: 1e-3},
			meta:   map[string]string{"optim.type": "sgd", "optim.sgd.lr": "0.001", "optim.sgd.momentum": "0", "optim.sgd.dampening": "0", "optim.sgd.nesterov": "false", "optim.sgd.weight_decay": "0"},
		},
		{
			name: "sgd nesterov", // torch.optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				return NewSGD(ps, SGDConfig{LR: 0.1, Momentum: 0.9, Nesterov: true, WeightDecay: 1e-4})
			},
			config: SGDConfig{LR: 0.1, Momentum: 0.9, Nesterov: true, WeightDecay: 1e-4},
			meta:   map[string]string{"optim.type": "sgd", "optim.sgd.lr": "0.1", "optim.sgd.momentum": "0.9", "optim.sgd.dampening": "0", "optim.sgd.nesterov": "true", "optim.sgd.weight_decay": "0.0001"},
		},
		{
			name:   "rmsprop defaults", // torch.optim.RMSprop(params)
			make:   func(ps []*autograd.Param[float64]) Optimizer[float64] { return NewRMSprop(ps, RMSpropDefaults()) },
			config: RMSpropConfig{LR: 1e-2, Alpha: 0.99, Eps: 1e-8},
			meta:   map[string]string{"optim.type": "rmsprop", "optim.rmsprop.lr": "0.01", "optim.rmsprop.alpha": "0.99", "optim.rmsprop.eps": "1e-08", "optim.rmsprop.momentum": "0", "optim.rmsprop.centered": "false", "optim.rmsprop.weight_decay": "0"},
		},
		{
			name: "rmsprop eps 0, momentum, centered", // torch.optim.RMSprop(params, lr=1e-3, eps=0, momentum=0.9, centered=True)
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				return NewRMSprop(ps, RMSpropConfig{LR: 1e-3, Alpha: 0.99, Momentum: 0.9, Centered: true})
			},
			config: RMSpropConfig{LR: 1e-3, Alpha: 0.99, Momentum: 0.9, Centered: true},
			meta:   map[string]string{"optim.type": "rmsprop", "optim.rmsprop.lr": "0.001", "optim.rmsprop.alpha": "0.99", "optim.rmsprop.eps": "0", "optim.rmsprop.momentum": "0.9", "optim.rmsprop.centered": "true", "optim.rmsprop.weight_decay": "0"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := []*autograd.Param[float64]{newParam[float64]("w", p0)}
			opt := tc.make(ps)
			if diff := cmp.Diff(tc.config, configOf(t, opt)); diff != "" {
				t.Errorf("Config() (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.meta, hyperMeta(t, opt)); diff != "" {
				t.Errorf("state metadata (-want +got):\n%s", diff)
			}
			again := remake(t, opt, []*autograd.Param[float64]{newParam[float64]("w", p0)})
			if diff := cmp.Diff(hyperMeta(t, opt), hyperMeta(t, again)); diff != "" {
				t.Errorf("an optimizer made from Config() differs (-first +second):\n%s", diff)
			}
			// Config reports the learning rate in effect, 0 from SetLR included.
			for _, lr := range []float64{0.25, 0} {
				opt.SetLR(lr)
				if diff := cmp.Diff(withLR(tc.config, lr), configOf(t, opt)); diff != "" {
					t.Errorf("Config() after SetLR(%v) (-want +got):\n%s", lr, diff)
				}
			}
		})
	}
}

// withLR returns the config c (an SGDConfig, AdamConfig or RMSpropConfig)
// with the learning rate lr.
func withLR(c any, lr float64) any {
	switch c := c.(type) {
	case SGDConfig:
		c.LR = lr
		return c
	case AdamConfig:
		c.LR = lr
		return c
	case RMSpropConfig:
		c.LR = lr
		return c
	}
	panic(fmt.Sprintf("withLR: %T", c))
}

// TestZeroIsZero checks that the deprecated Zero still compiles where a
// float64 goes and is 0: a config that spells a zero with it makes the
// optimizer that 0 does (TestZeroMeansZero's "adam eps Zero" steps it).
func TestZeroIsZero(t *testing.T) {
	if Zero != 0 {
		t.Errorf("Zero = %v, want 0", Zero)
	}
	c := AdamDefaults()
	c.Beta1, c.Eps, c.WeightDecay = Zero, Zero, Zero
	want := AdamConfig{LR: 1e-3, Beta2: 0.999}
	for _, opt := range []*Adam[float64]{
		NewAdam([]*autograd.Param[float64]{newParam[float64]("w", p0)}, c),
		NewAdamW([]*autograd.Param[float64]{newParam[float64]("w", p0)}, c),
	} {
		if diff := cmp.Diff(want, opt.Config()); diff != "" {
			t.Errorf("Config() with Zero fields, decoupled %v (-want +got):\n%s", opt.Decoupled(), diff)
		}
	}
}
