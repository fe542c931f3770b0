package optim

import (
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

// TestConfigDefaults checks that a hyperparameter left at 0 takes
// torch.optim's default, one set to Zero is 0, and the Config an optimizer
// reports makes the same optimizer again.
func TestConfigDefaults(t *testing.T) {
	for _, tc := range []struct {
		name   string
		make   func([]*autograd.Param[float64]) Optimizer[float64]
		config any               // want Config()
		meta   map[string]string // want the state's metadata, step counts aside
	}{
		{
			name:   "adam lr only", // torch.optim.Adam(params, lr=1e-3)
			make:   func(ps []*autograd.Param[float64]) Optimizer[float64] { return NewAdam(ps, AdamConfig{LR: 1e-3}) },
			config: AdamConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8},
			meta:   map[string]string{"optim.type": "adam", "optim.adam.lr": "0.001", "optim.adam.beta1": "0.9", "optim.adam.beta2": "0.999", "optim.adam.eps": "1e-08", "optim.adam.weight_decay": "0"},
		},
		{
			name:   "adam nothing set", // torch.optim.Adam(params)
			make:   func(ps []*autograd.Param[float64]) Optimizer[float64] { return NewAdam(ps, AdamConfig{}) },
			config: AdamDefaults(),
			meta:   map[string]string{"optim.type": "adam", "optim.adam.lr": "0.001", "optim.adam.beta1": "0.9", "optim.adam.beta2": "0.999", "optim.adam.eps": "1e-08", "optim.adam.weight_decay": "0"},
		},
		{
			name: "adam beta1 and eps zero", // torch.optim.Adam(params, lr=1e-3, betas=(0, 0.999), eps=0)
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				return NewAdam(ps, AdamConfig{LR: 1e-3, Beta1: Zero, Eps: Zero})
			},
			config: AdamConfig{LR: 1e-3, Beta1: Zero, Beta2: 0.999, Eps: Zero},
			meta:   map[string]string{"optim.type": "adam", "optim.adam.lr": "0.001", "optim.adam.beta1": "0", "optim.adam.beta2": "0.999", "optim.adam.eps": "0", "optim.adam.weight_decay": "0"},
		},
		{
			// The smallest positive float64 is itself, not Zero: Zero is negative.
			name: "adam eps the smallest positive", // torch.optim.Adam(params, eps=5e-324)
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				return NewAdam(ps, AdamConfig{Eps: math.SmallestNonzeroFloat64})
			},
			config: AdamConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: math.SmallestNonzeroFloat64},
			meta:   map[string]string{"optim.type": "adam", "optim.adam.lr": "0.001", "optim.adam.beta1": "0.9", "optim.adam.beta2": "0.999", "optim.adam.eps": "5e-324", "optim.adam.weight_decay": "0"},
		},
		{
			name:   "adamw lr only", // torch.optim.AdamW(params, lr=1e-2)
			make:   func(ps []*autograd.Param[float64]) Optimizer[float64] { return NewAdamW(ps, AdamConfig{LR: 1e-2}) },
			config: AdamConfig{LR: 1e-2, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-2},
			meta:   map[string]string{"optim.type": "adamw", "optim.adamw.lr": "0.01", "optim.adamw.beta1": "0.9", "optim.adamw.beta2": "0.999", "optim.adamw.eps": "1e-08", "optim.adamw.weight_decay": "0.01"},
		},
		{
			name: "adamw without decay", // torch.optim.AdamW(params, weight_decay=0)
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				return NewAdamW(ps, AdamConfig{WeightDecay: Zero})
			},
			config: AdamConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: Zero},
			meta:   map[string]string{"optim.type": "adamw", "optim.adamw.lr": "0.001", "optim.adamw.beta1": "0.9", "optim.adamw.beta2": "0.999", "optim.adamw.eps": "1e-08", "optim.adamw.weight_decay": "0"},
		},
		{
			name:   "sgd nothing set", // torch.optim.SGD(params)
			make:   func(ps []*autograd.Param[float64]) Optimizer[float64] { return NewSGD(ps, SGDConfig{}) },
			config: SGDConfig{LR: 1e-3},
			meta:   map[string]string{"optim.type": "sgd", "optim.sgd.lr": "0.001", "optim.sgd.momentum": "0", "optim.sgd.dampening": "0", "optim.sgd.nesterov": "false", "optim.sgd.weight_decay": "0"},
		},
		{
			name: "sgd momentum only", // torch.optim.SGD(params, momentum=0.9, nesterov=True)
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				return NewSGD(ps, SGDConfig{Momentum: 0.9, Nesterov: true})
			},
			config: SGDConfig{LR: 1e-3, Momentum: 0.9, Nesterov: true},
			meta:   map[string]string{"optim.type": "sgd", "optim.sgd.lr": "0.001", "optim.sgd.momentum": "0.9", "optim.sgd.dampening": "0", "optim.sgd.nesterov": "true", "optim.sgd.weight_decay": "0"},
		},
		{
			name: "sgd zero lr and dampening", // torch.optim.SGD(params, lr=0, momentum=0.5, dampening=0)
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				return NewSGD(ps, SGDConfig{LR: Zero, Momentum: 0.5, Dampening: Zero})
			},
			config: SGDConfig{LR: Zero, Momentum: 0.5},
			meta:   map[string]string{"optim.type": "sgd", "optim.sgd.lr": "0", "optim.sgd.momentum": "0.5", "optim.sgd.dampening": "0", "optim.sgd.nesterov": "false", "optim.sgd.weight_decay": "0"},
		},
		{
			name:   "rmsprop lr only", // torch.optim.RMSprop(params, lr=1e-3)
			make:   func(ps []*autograd.Param[float64]) Optimizer[float64] { return NewRMSprop(ps, RMSpropConfig{LR: 1e-3}) },
			config: RMSpropConfig{LR: 1e-3, Alpha: 0.99, Eps: 1e-8},
			meta:   map[string]string{"optim.type": "rmsprop", "optim.rmsprop.lr": "0.001", "optim.rmsprop.alpha": "0.99", "optim.rmsprop.eps": "1e-08", "optim.rmsprop.momentum": "0", "optim.rmsprop.centered": "false", "optim.rmsprop.weight_decay": "0"},
		},
		{
			name: "rmsprop momentum, centered", // torch.optim.RMSprop(params, momentum=0.9, centered=True)
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				return NewRMSprop(ps, RMSpropConfig{Momentum: 0.9, Centered: true})
			},
			config: RMSpropConfig{LR: 1e-2, Alpha: 0.99, Eps: 1e-8, Momentum: 0.9, Centered: true},
			meta:   map[string]string{"optim.type": "rmsprop", "optim.rmsprop.lr": "0.01", "optim.rmsprop.alpha": "0.99", "optim.rmsprop.eps": "1e-08", "optim.rmsprop.momentum": "0.9", "optim.rmsprop.centered": "true", "optim.rmsprop.weight_decay": "0"},
		},
		{
			name: "rmsprop alpha and eps zero", // torch.optim.RMSprop(params, alpha=0, eps=0)
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				return NewRMSprop(ps, RMSpropConfig{Alpha: Zero, Eps: Zero})
			},
			config: RMSpropConfig{LR: 1e-2, Alpha: Zero, Eps: Zero},
			meta:   map[string]string{"optim.type": "rmsprop", "optim.rmsprop.lr": "0.01", "optim.rmsprop.alpha": "0", "optim.rmsprop.eps": "0", "optim.rmsprop.momentum": "0", "optim.rmsprop.centered": "false", "optim.rmsprop.weight_decay": "0"},
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
		})
	}
}

// TestConfigZeroSteps checks that a hyperparameter set to Zero is a real
// zero in the update, where leaving it at 0 would take torch's nonzero
// default. Each case takes one step from p0 with gradient g₁ = [0.5, −1].
func TestConfigZeroSteps(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func([]*autograd.Param[float64]) Optimizer[float64]
		want []float64
	}{
		{
			// p ← p − 0·g
			name: "sgd lr zero",
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] { return NewSGD(ps, SGDConfig{LR: Zero}) },
			want: p0,
		},
		{
			// Step 1 of Adam moves each element by lr·g/(|g| + ε): exactly lr with ε = 0.
			name: "adam eps zero",
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				return NewAdam(ps, AdamConfig{LR: 0.1, Eps: Zero})
			},
			want: []float64{1 - 0.1, -2 + 0.1},
		},
		{
			// No decay: p ← p − lr·g/(|g| + 1e-8), as Adam's first step.
			name: "adamw weight decay zero",
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				return NewAdamW(ps, AdamConfig{LR: 0.1, WeightDecay: Zero})
			},
			want: []float64{1 - 0.1*0.5/(0.5+1e-8), -2 + 0.1*1/(1+1e-8)},
		},
		{
			// The decay of torch's default 1e-2 first: p ← p·(1 − 0.1·0.01).
			name: "adamw weight decay default",
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] { return NewAdamW(ps, AdamConfig{LR: 0.1}) },
			want: []float64{1*0.999 - 0.1*0.5/(0.5+1e-8), -2*0.999 + 0.1*1/(1+1e-8)},
		},
		{
			// α = 0: s = g², so p ← p − lr·g/(|g| + 0) = p − lr·sign(g).
			name: "rmsprop alpha and eps zero",
			make: func(ps []*autograd.Param[float64]) Optimizer[float64] {
				return NewRMSprop(ps, RMSpropConfig{LR: 0.1, Alpha: Zero, Eps: Zero})
			},
			want: []float64{1 - 0.1, -2 + 0.1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newParam[float64]("w", p0)
			opt := tc.make([]*autograd.Param[float64]{p})
			setGrad(p, g1)
			opt.Step()
			if diff := cmp.Diff(tc.want, p.Value.Data(), cmpopts.EquateApprox(1e-15, 0)); diff != "" {
				t.Errorf("p after one step (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAdamLROnlyIsTorch checks two steps of AdamConfig{LR: 1e-3}, what a
// PyTorch user writes for torch.optim.Adam(params, lr=1e-3), against torch's
// rule worked by hand with betas (0.9, 0.999) and eps 1e-8 (the numbers of
// the "adam" case of TestStepRules, at lr 1e-3):
//
//	step 1: m̂ = g₁, √v̂ = |g₁|:          p = p0 − 1e-3·g₁/(|g₁| + 1e-8)
//	step 2: m = [0.07, 0.11], v = [0.00031225, 0.004999],
//	        1 − β₁² = 0.19, 1 − β₂² = 0.001999
func TestAdamLROnlyIsTorch(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func([]*autograd.Param[float64]) Optimizer[float64]
	}{
		{"lr only", func(ps []*autograd.Param[float64]) Optimizer[float64] { return NewAdam(ps, AdamConfig{LR: 1e-3}) }},
		{"defaults", func(ps []*autograd.Param[float64]) Optimizer[float64] { return NewAdam(ps, AdamDefaults()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			step1 := []float64{1 - 1e-3*0.5/(0.5+1e-8), -2 + 1e-3*1/(1+1e-8)}
			step2 := []float64{
				step1[0] - 1e-3*(0.07/0.19)/(math.Sqrt(0.00031225/0.001999)+1e-8),
				step1[1] - 1e-3*(0.11/0.19)/(math.Sqrt(0.004999/0.001999)+1e-8),
			}
			p := newParam[float64]("w", p0)
			opt := tc.make([]*autograd.Param[float64]{p})
			for k, want := range [][]float64{step1, step2} {
				setGrad(p, [][]float64{g1, g2}[k])
				opt.Step()
				if diff := cmp.Diff(want, p.Value.Data(), cmpopts.EquateApprox(1e-14, 0)); diff != "" {
					t.Errorf("p after step %d (-want +got):\n%s", k+1, diff)
				}
			}
		})
	}
}

// TestValidateZero checks that Validate takes 0 for torch's default and
// Zero for 0, and refuses any other negative value.
func TestValidateZero(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string // "" for valid, else what the error must say
	}{
		{"adam lr only", AdamConfig{LR: 1e-3}.Validate(), ""},
		{"adam all zero", AdamConfig{LR: Zero, Beta1: Zero, Beta2: Zero, Eps: Zero, WeightDecay: Zero}.Validate(), ""},
		{"adam tiny negative eps", AdamConfig{Eps: -1e-300}.Validate(), "invalid eps -1e-300"},
		{"adam eps spelled as Zero's value", AdamConfig{Eps: -math.SmallestNonzeroFloat64}.Validate(), ""},
		{"sgd lr the smallest positive", SGDConfig{LR: math.SmallestNonzeroFloat64}.Validate(), ""},
		{"sgd nothing", SGDConfig{}.Validate(), ""},
		{"sgd nesterov with zero momentum", SGDConfig{Momentum: Zero, Nesterov: true}.Validate(), "Nesterov momentum requires a momentum > 0"},
		{"sgd dampening zero", SGDConfig{Momentum: 0.9, Dampening: Zero, Nesterov: true}.Validate(), ""},
		{"rmsprop alpha zero", RMSpropConfig{Alpha: Zero}.Validate(), ""},
		{"rmsprop negative alpha", RMSpropConfig{Alpha: -0.5}.Validate(), "invalid alpha -0.5"},
	} {
		switch {
		case tc.want == "" && tc.err != nil:
			t.Errorf("%s: Validate: %v, want nil", tc.name, tc.err)
		case tc.want != "" && (tc.err == nil || !strings.Contains(tc.err.Error(), tc.want)):
			t.Errorf("%s: Validate: %v, want an error saying %q", tc.name, tc.err, tc.want)
		}
	}
}

// TestZeroIsNegative checks that Zero is what its documentation says, the
// negative float64 closest to 0, so that no valid positive value is taken
// for it: the smallest positive float64 resolves to itself.
func TestZeroIsNegative(t *testing.T) {
	if !(Zero < 0) || Zero != -math.SmallestNonzeroFloat64 {
		t.Errorf("Zero = %v, want %v", Zero, -math.SmallestNonzeroFloat64)
	}
	for _, tc := range []struct {
		v, def, want float64
	}{
		{0, 0.9, 0.9},
		{Zero, 0.9, 0},
		{math.SmallestNonzeroFloat64, 0.9, math.SmallestNonzeroFloat64},
		{0.5, 0.9, 0.5},
	} {
		if got := orDefault(tc.v, tc.def); got != tc.want {
			t.Errorf("orDefault(%v, %v) = %v, want %v", tc.v, tc.def, got, tc.want)
		}
	}
}
