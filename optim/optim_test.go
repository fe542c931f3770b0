package optim

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// Every case below starts from the parameter p = [1, −2] and applies the
// gradients g₁ = [0.5, −1], then g₂ = [0.25, 2] (and g₃ = [−1, 0.5] where a
// third step is checked). The expected values are worked out by hand from
// the update rule in the type's doc comment: each intermediate quantity is
// written as a literal (or a short expression of literals) and the
// arithmetic is spelled out in the comments.

var (
	p0 = []float64{1, -2}
	g1 = []float64{0.5, -1}
	g2 = []float64{0.25, 2}
	g3 = []float64{-1, 0.5}
)

const eps8 = 1e-8

type stepCase struct {
	name string
	make func(ps []*autograd.Param[float64]) Optimizer[float64]
	// want[k] is p after step k+1; state[k] the named buffers after it.
	want  [][]float64
	state []map[string][]float64
}

func stepCases() []stepCase {
	sgd := func(c SGDConfig) func([]*autograd.Param[float64]) Optimizer[float64] {
		return func(ps []*autograd.Param[float64]) Optimizer[float64] { return NewSGD(ps, c) }
	}
	adam := func(c AdamConfig) func([]*autograd.Param[float64]) Optimizer[float64] {
		return func(ps []*autograd.Param[float64]) Optimizer[float64] { return NewAdam(ps, c) }
	}
	adamw := func(c AdamConfig) func([]*autograd.Param[float64]) Optimizer[float64] {
		return func(ps []*autograd.Param[float64]) Optimizer[float64] { return NewAdamW(ps, c) }
	}
	rms := func(c RMSpropConfig) func([]*autograd.Param[float64]) Optimizer[float64] {
		return func(ps []*autograd.Param[float64]) Optimizer[float64] { return NewRMSprop(ps, c) }
	}
	sqrt := math.Sqrt

	// Adam, lr 0.1, β = (0.9, 0.999), ε = 1e-8.
	//   step 1: m = 0.1·g₁ = [0.05, −0.1]; v = 0.001·g₁² = [0.00025, 0.001]
	//           1 − β₁ = 0.1, 1 − β₂ = 0.001, so m̂ = g₁ and √v̂ = |g₁|:
	//           p = p0 − 0.1·g₁/(|g₁| + ε)
	//   step 2: m = 0.9·m + 0.1·g₂ = [0.045 + 0.025, −0.09 + 0.2] = [0.07, 0.11]
	//           v = 0.999·v + 0.001·g₂² = [0.00024975 + 0.0000625, 0.000999 + 0.004]
	//             = [0.00031225, 0.004999]
	//           1 − β₁² = 0.19, 1 − β₂² = 0.001999
	adam1 := []float64{1 - 0.1*0.5/(0.5+eps8), -2 + 0.1*1/(1+eps8)}
	adam2 := []float64{
		adam1[0] - 0.1*(0.07/0.19)/(sqrt(0.00031225/0.001999)+eps8),
		adam1[1] - 0.1*(0.11/0.19)/(sqrt(0.004999/0.001999)+eps8),
	}
	//   step 3: m = 0.9·[0.07, 0.11] + 0.1·g₃ = [0.063 − 0.1, 0.099 + 0.05] = [−0.037, 0.149]
	//           v = 0.999·v + 0.001·g₃² = [0.00031193775 + 0.001, 0.004994001 + 0.00025]
	//             = [0.00131193775, 0.005244001]
	//           1 − β₁³ = 0.271, 1 − β₂³ = 0.002997001
	adam3 := []float64{
		adam2[0] - 0.1*(-0.037/0.271)/(sqrt(0.00131193775/0.002997001)+eps8),
		adam2[1] - 0.1*(0.149/0.271)/(sqrt(0.005244001/0.002997001)+eps8),
	}

	// Adam with a large ε = 0.1 shows where ε goes: after the square root of
	// the bias-corrected v. Step 1: p = p0 − 0.1·g₁/(|g₁| + 0.1)
	//   = [1 − 0.05/0.6, −2 + 0.1/1.1]; step 2 as above with ε = 0.1.
	adamEps1 := []float64{1 - 0.05/0.6, -2 + 0.1/1.1}
	adamEps2 := []float64{
		adamEps1[0] - 0.1*(0.07/0.19)/(sqrt(0.00031225/0.001999)+0.1),
		adamEps1[1] - 0.1*(0.11/0.19)/(sqrt(0.004999/0.001999)+0.1),
	}

	// Adam with L2 weight decay λ = 0.1 (lr 0.1): d = g + 0.1·p.
	//   step 1: d = [0.5 + 0.1, −1 − 0.2] = [0.6, −1.2]; m̂ = d, √v̂ = |d|
	//           p = [1 − 0.1·0.6/(0.6 + ε), −2 + 0.1·1.2/(1.2 + ε)]
	//   step 2: d₂ = g₂ + 0.1·p₁ (p₁ from step 1, so d₂ is an expression)
	//           m = 0.9·(0.1·d₁) + 0.1·d₂ = 0.09·d₁ + 0.1·d₂
	//           v = 0.999·(0.001·d₁²) + 0.001·d₂² = 0.000999·d₁² + 0.001·d₂²
	adamL2a := []float64{1 - 0.1*0.6/(0.6+eps8), -2 + 0.1*1.2/(1.2+eps8)}
	d2 := []float64{0.25 + 0.1*adamL2a[0], 2 + 0.1*adamL2a[1]}
	adamL2b := make([]float64, 2)
	d1 := []float64{0.6, -1.2}
	adamL2m, adamL2v := make([]float64, 2), make([]float64, 2)
	for j := range 2 {
		adamL2m[j] = 0.09*d1[j] + 0.1*d2[j]
		adamL2v[j] = 0.000999*d1[j]*d1[j] + 0.001*d2[j]*d2[j]
		adamL2b[j] = adamL2a[j] - 0.1*(adamL2m[j]/0.19)/(sqrt(adamL2v[j]/0.001999)+eps8)
	}

	// AdamW, lr 0.1, λ = 0.1: each step first multiplies p by 1 − 0.1·0.1 = 0.99,
	// then the moments are Adam's (no L2 term):
	//   step 1: p = [0.99 − 0.1·0.5/(0.5 + ε), −1.98 + 0.1·1/(1 + ε)]
	//   step 2: p = 0.99·p₁ − 0.1·m̂/(√v̂ + ε) with m, v as in the Adam case
	adamW1 := []float64{0.99 - 0.1*0.5/(0.5+eps8), -1.98 + 0.1*1/(1+eps8)}
	adamW2 := []float64{
		0.99*adamW1[0] - 0.1*(0.07/0.19)/(sqrt(0.00031225/0.001999)+eps8),
		0.99*adamW1[1] - 0.1*(0.11/0.19)/(sqrt(0.004999/0.001999)+eps8),
	}

	// RMSprop, lr 0.01, α = 0.99, ε = 1e-8.
	//   step 1: s = 0.01·g₁² = [0.0025, 0.01]; √s = [0.05, 0.1]
	//           p = [1 − 0.01·0.5/(0.05 + ε), −2 + 0.01·1/(0.1 + ε)]
	//   step 2: s = 0.99·s + 0.01·g₂² = [0.002475 + 0.000625, 0.0099 + 0.04] = [0.0031, 0.0499]
	rms1 := []float64{1 - 0.005/(0.05+eps8), -2 + 0.01/(0.1+eps8)}
	rms2 := []float64{rms1[0] - 0.01*0.25/(sqrt(0.0031)+eps8), rms1[1] - 0.01*2/(sqrt(0.0499)+eps8)}

	// RMSprop centered with momentum μ = 0.5 (lr 0.01, α = 0.99).
	//   step 1: s = [0.0025, 0.01]; a = 0.01·g₁ = [0.005, −0.01]
	//           s − a² = [0.0025 − 0.000025, 0.01 − 0.0001] = [0.002475, 0.0099]
	//           b = g₁/(√(s − a²) + ε); p = p0 − 0.01·b
	//   step 2: s = [0.0031, 0.0499]; a = 0.99·a + 0.01·g₂ = [0.00495 + 0.0025, −0.0099 + 0.02]
	//             = [0.00745, 0.0101]
	//           s − a² = [0.0031 − 0.0000555025, 0.0499 − 0.00010201] = [0.0030444975, 0.04979799]
	//           b = 0.5·b₁ + g₂/(√(s − a²) + ε); p = p₁ − 0.01·b
	rcB1 := []float64{0.5 / (sqrt(0.002475) + eps8), -1 / (sqrt(0.0099) + eps8)}
	rc1 := []float64{1 - 0.01*rcB1[0], -2 - 0.01*rcB1[1]}
	rcB2 := []float64{0.5*rcB1[0] + 0.25/(sqrt(0.0030444975)+eps8), 0.5*rcB1[1] + 2/(sqrt(0.04979799)+eps8)}
	rc2 := []float64{rc1[0] - 0.01*rcB2[0], rc1[1] - 0.01*rcB2[1]}

	// RMSprop with weight decay λ = 0.5 (lr 0.01, α = 0.9).
	//   step 1: d = g₁ + 0.5·p0 = [1, −2]; s = 0.1·d² = [0.1, 0.4]
	//           p = [1 − 0.01·1/(√0.1 + ε), −2 + 0.01·2/(√0.4 + ε)]
	rwd1 := []float64{1 - 0.01/(sqrt(0.1)+eps8), -2 + 0.02/(sqrt(0.4)+eps8)}

	return []stepCase{
		{
			// Plain SGD, lr 0.1: p ← p − 0.1·g.
			//   step 1: [1 − 0.05, −2 + 0.1] = [0.95, −1.9]
			//   step 2: [0.95 − 0.025, −1.9 − 0.2] = [0.925, −2.1]
			//   step 3: [0.925 + 0.1, −2.1 − 0.05] = [1.025, −2.15]
			name: "sgd",
			make: sgd(SGDConfig{LR: 0.1}),
			want: [][]float64{{0.95, -1.9}, {0.925, -2.1}, {1.025, -2.15}},
		},
		{
			// SGD, lr 0.1, μ = 0.9, τ = 0.1, λ = 0.01.
			//   step 1: d = g₁ + 0.01·p0 = [0.51, −1.02]; b = d (first step: no dampening)
			//           p = [1 − 0.051, −2 + 0.102] = [0.949, −1.898]
			//   step 2: d = g₂ + 0.01·p₁ = [0.25949, 1.98102]
			//           b = 0.9·[0.51, −1.02] + 0.9·d = [0.459 + 0.233541, −0.918 + 1.782918]
			//             = [0.692541, 0.864918]
			//           p = [0.949 − 0.0692541, −1.898 − 0.0864918] = [0.8797459, −1.9844918]
			name: "sgd momentum dampening decay",
			make: sgd(SGDConfig{LR: 0.1, Momentum: 0.9, Dampening: 0.1, WeightDecay: 0.01}),
			want: [][]float64{{0.949, -1.898}, {0.8797459, -1.9844918}},
			state: []map[string][]float64{
				{"momentum_buffer": {0.51, -1.02}},
				{"momentum_buffer": {0.692541, 0.864918}},
			},
		},
		{
			// SGD Nesterov, lr 0.1, μ = 0.9.
			//   step 1: b = g₁ = [0.5, −1]; d = g₁ + 0.9·b = [0.95, −1.9]
			//           p = [1 − 0.095, −2 + 0.19] = [0.905, −1.81]
			//   step 2: b = 0.9·[0.5, −1] + g₂ = [0.7, 1.1]; d = g₂ + 0.9·b = [0.88, 2.99]
			//           p = [0.905 − 0.088, −1.81 − 0.299] = [0.817, −2.109]
			//   step 3: b = 0.9·[0.7, 1.1] + g₃ = [−0.37, 1.49]; d = g₃ + 0.9·b = [−1.333, 1.841]
			//           p = [0.817 + 0.1333, −2.109 − 0.1841] = [0.9503, −2.2931]
			name: "sgd nesterov",
			make: sgd(SGDConfig{LR: 0.1, Momentum: 0.9, Nesterov: true}),
			want: [][]float64{{0.905, -1.81}, {0.817, -2.109}, {0.9503, -2.2931}},
			state: []map[string][]float64{
				{"momentum_buffer": {0.5, -1}},
				{"momentum_buffer": {0.7, 1.1}},
				{"momentum_buffer": {-0.37, 1.49}},
			},
		},
		{
			name: "adam",
			make: adam(AdamConfig{LR: 0.1, Beta1: 0.9, Beta2: 0.999, Eps: eps8}),
			want: [][]float64{adam1, adam2, adam3},
			state: []map[string][]float64{
				{"exp_avg": {0.05, -0.1}, "exp_avg_sq": {0.00025, 0.001}},
				{"exp_avg": {0.07, 0.11}, "exp_avg_sq": {0.00031225, 0.004999}},
				{"exp_avg": {-0.037, 0.149}, "exp_avg_sq": {0.00131193775, 0.005244001}},
			},
		},
		{
			name: "adam eps after sqrt",
			make: adam(AdamConfig{LR: 0.1, Beta1: 0.9, Beta2: 0.999, Eps: 0.1}),
			want: [][]float64{adamEps1, adamEps2},
		},
		{
			name: "adam l2",
			make: adam(AdamConfig{LR: 0.1, Beta1: 0.9, Beta2: 0.999, Eps: eps8, WeightDecay: 0.1}),
			want: [][]float64{adamL2a, adamL2b},
			state: []map[string][]float64{
				{"exp_avg": {0.06, -0.12}, "exp_avg_sq": {0.00036, 0.00144}},
				{"exp_avg": adamL2m, "exp_avg_sq": adamL2v},
			},
		},
		{
			name: "adamw",
			make: adamw(AdamConfig{LR: 0.1, Beta1: 0.9, Beta2: 0.999, Eps: eps8, WeightDecay: 0.1}),
			want: [][]float64{adamW1, adamW2},
			state: []map[string][]float64{
				{"exp_avg": {0.05, -0.1}, "exp_avg_sq": {0.00025, 0.001}},
				{"exp_avg": {0.07, 0.11}, "exp_avg_sq": {0.00031225, 0.004999}},
			},
		},
		{
			name: "rmsprop",
			make: rms(RMSpropConfig{LR: 0.01, Alpha: 0.99, Eps: eps8}),
			want: [][]float64{rms1, rms2},
			state: []map[string][]float64{
				{"square_avg": {0.0025, 0.01}},
				{"square_avg": {0.0031, 0.0499}},
			},
		},
		{
			name: "rmsprop centered momentum",
			make: rms(RMSpropConfig{LR: 0.01, Alpha: 0.99, Eps: eps8, Momentum: 0.5, Centered: true}),
			want: [][]float64{rc1, rc2},
			state: []map[string][]float64{
				{"square_avg": {0.0025, 0.01}, "grad_avg": {0.005, -0.01}, "momentum_buffer": rcB1},
				{"square_avg": {0.0031, 0.0499}, "grad_avg": {0.00745, 0.0101}, "momentum_buffer": rcB2},
			},
		},
		{
			name: "rmsprop weight decay",
			make: rms(RMSpropConfig{LR: 0.01, Alpha: 0.9, Eps: eps8, WeightDecay: 0.5}),
			want: [][]float64{rwd1},
			state: []map[string][]float64{
				{"square_avg": {0.1, 0.4}},
			},
		},
	}
}

// newParam returns a parameter named name holding a copy of v.
func newParam[T tensor.Float](name string, v []float64) *autograd.Param[T] {
	d := make([]T, len(v))
	for i, x := range v {
		d[i] = T(x)
	}
	return autograd.NewParam(name, tensor.FromSlice(d))
}

func setGrad[T tensor.Float](p *autograd.Param[T], g []float64) {
	for i, x := range g {
		p.Grad.Data()[i] = T(x)
	}
}

func closeTo(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*max(1, math.Abs(want))
}

func TestStepRules(t *testing.T) {
	grads := [][]float64{g1, g2, g3}
	for _, tc := range stepCases() {
		t.Run(tc.name, func(t *testing.T) {
			p := newParam[float64]("w", p0)
			opt := tc.make([]*autograd.Param[float64]{p})
			for k, want := range tc.want {
				setGrad(p, grads[k])
				opt.Step()
				for j, w := range want {
					if got := p.Value.Data()[j]; !closeTo(got, w, 1e-12) {
						t.Errorf("step %d: p[%d] = %.17g, want %.17g", k+1, j, got, w)
					}
				}
				if k >= len(tc.state) {
					continue
				}
				ts, _, _ := opt.StateDict()
				for buf, want := range tc.state[k] {
					kind := kindOf(opt)
					got := ts["optim."+kind+"."+buf+".w"]
					if got == nil {
						t.Fatalf("step %d: no state tensor %q in %v", k+1, buf, keys(ts))
					}
					for j, w := range want {
						if g := got.Data()[j]; !closeTo(g, w, 1e-12) {
							t.Errorf("step %d: %s[%d] = %.17g, want %.17g", k+1, buf, j, g, w)
						}
					}
				}
			}
		})
	}
}

// TestStepRulesFloat32 runs the same cases in float32: the same rule, with
// results rounded to float32.
func TestStepRulesFloat32(t *testing.T) {
	grads := [][]float64{g1, g2, g3}
	for _, tc := range stepCases() {
		t.Run(tc.name, func(t *testing.T) {
			p := newParam[float32]("w", p0)
			opt := make32(tc.name, []*autograd.Param[float32]{p})
			for k, want := range tc.want {
				setGrad(p, grads[k])
				opt.Step()
				for j, w := range want {
					if got := float64(p.Value.Data()[j]); !closeTo(got, w, 2e-6) {
						t.Errorf("step %d: p[%d] = %.9g, want %.9g", k+1, j, got, w)
					}
				}
			}
		})
	}
}

// make32 builds the float32 twin of the step case called name.
func make32(name string, ps []*autograd.Param[float32]) Optimizer[float32] {
	switch name {
	case "sgd":
		return NewSGD(ps, SGDConfig{LR: 0.1})
	case "sgd momentum dampening decay":
		return NewSGD(ps, SGDConfig{LR: 0.1, Momentum: 0.9, Dampening: 0.1, WeightDecay: 0.01})
	case "sgd nesterov":
		return NewSGD(ps, SGDConfig{LR: 0.1, Momentum: 0.9, Nesterov: true})
	case "adam":
		return NewAdam(ps, AdamConfig{LR: 0.1, Beta1: 0.9, Beta2: 0.999, Eps: eps8})
	case "adam eps after sqrt":
		return NewAdam(ps, AdamConfig{LR: 0.1, Beta1: 0.9, Beta2: 0.999, Eps: 0.1})
	case "adam l2":
		return NewAdam(ps, AdamConfig{LR: 0.1, Beta1: 0.9, Beta2: 0.999, Eps: eps8, WeightDecay: 0.1})
	case "adamw":
		return NewAdamW(ps, AdamConfig{LR: 0.1, Beta1: 0.9, Beta2: 0.999, Eps: eps8, WeightDecay: 0.1})
	case "rmsprop":
		return NewRMSprop(ps, RMSpropConfig{LR: 0.01, Alpha: 0.99, Eps: eps8})
	case "rmsprop centered momentum":
		return NewRMSprop(ps, RMSpropConfig{LR: 0.01, Alpha: 0.99, Eps: eps8, Momentum: 0.5, Centered: true})
	case "rmsprop weight decay":
		return NewRMSprop(ps, RMSpropConfig{LR: 0.01, Alpha: 0.9, Eps: eps8, WeightDecay: 0.5})
	}
	panic("no float32 twin of " + name)
}

func kindOf[T tensor.Float](opt Optimizer[T]) string {
	_, meta, _ := opt.StateDict()
	return meta["optim.type"]
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestAdamBiasCorrectionLate checks the bias correction far from the start:
// with a constant gradient g, m and v are (1 − β₁ᵗ)·g and (1 − β₂ᵗ)·g², so
// the bias-corrected ratio is exactly g/|g| and every step moves p by lr
// (up to ε).
func TestAdamBiasCorrectionLate(t *testing.T) {
	p := newParam[float64]("w", []float64{0})
	opt := NewAdam([]*autograd.Param[float64]{p}, AdamConfig{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 0})
	for k := 1; k <= 50; k++ {
		setGrad(p, []float64{-3})
		opt.Step()
		if got, want := p.Value.Data()[0], 0.01*float64(k); !closeTo(got, want, 1e-12) {
			t.Fatalf("step %d: p = %.17g, want %.17g", k, got, want)
		}
	}
	if s := opt.Steps(); s[0] != 50 {
		t.Fatalf("Steps() = %v, want [50]", s)
	}
}

func TestNilGradSkipped(t *testing.T) {
	a := newParam[float64]("a", []float64{1})
	b := newParam[float64]("b", []float64{1})
	b.Grad = nil
	opt := NewAdam([]*autograd.Param[float64]{a, b}, AdamDefaults())
	setGrad(a, []float64{1})
	opt.Step()
	if b.Value.Data()[0] != 1 {
		t.Errorf("a parameter with nil Grad moved to %v", b.Value.Data()[0])
	}
	if s := opt.Steps(); s[0] != 1 || s[1] != 0 {
		t.Errorf("Steps() = %v, want [1 0]", s)
	}
	opt.ZeroGrad()
	if b.Grad == nil || a.Grad.Data()[0] != 0 {
		t.Errorf("ZeroGrad did not zero (or allocate) the gradients: %v %v", a.Grad, b.Grad)
	}
}

func TestSetLR(t *testing.T) {
	p := newParam[float64]("w", []float64{1})
	opt := NewSGD([]*autograd.Param[float64]{p}, SGDConfig{LR: 0.1})
	opt.SetLR(0.5)
	if opt.LR() != 0.5 || opt.Config().LR != 0.5 {
		t.Fatalf("LR() = %v after SetLR(0.5)", opt.LR())
	}
	setGrad(p, []float64{2})
	opt.Step()
	if got := p.Value.Data()[0]; got != 0 { // 1 − 0.5·2
		t.Fatalf("p = %v, want 0", got)
	}
}

func TestStepAllocatesNothing(t *testing.T) {
	ps := []*autograd.Param[float32]{newParam[float32]("a", []float64{1, 2, 3}), newParam[float32]("b", []float64{4})}
	opts := []Optimizer[float32]{
		NewSGD(ps, SGDConfig{LR: 0.1, Momentum: 0.9, Nesterov: true}),
		NewAdam(ps, AdamDefaults()),
		NewAdamW(ps, AdamWDefaults()),
		NewRMSprop(ps, RMSpropConfig{LR: 0.01, Alpha: 0.99, Eps: eps8, Momentum: 0.9, Centered: true}),
	}
	for _, opt := range opts {
		if n := testing.AllocsPerRun(10, opt.Step); n != 0 {
			t.Errorf("%s: Step allocates %v times", kindOf(opt), n)
		}
	}
}

func mustPanic(t *testing.T, name, want string, f func()) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil {
			t.Errorf("%s: no panic", name)
			return
		}
		if msg := fmt.Sprint(r); !strings.Contains(msg, want) {
			t.Errorf("%s: panic %q does not mention %q", name, msg, want)
		}
	}()
	f()
}

func TestMisusePanics(t *testing.T) {
	ps := func(names ...string) []*autograd.Param[float64] {
		var out []*autograd.Param[float64]
		for _, n := range names {
			out = append(out, newParam[float64](n, []float64{1, 2}))
		}
		return out
	}
	mustPanic(t, "bad config", "Beta1 = 2", func() { NewAdam(ps("a"), AdamConfig{LR: 1, Beta1: 2}) })
	// Names matter only for the state: training with duplicate or empty
	// names works, saving or loading the state is an error.
	for _, c := range []struct {
		ps   []*autograd.Param[float64]
		want string
	}{{ps("a", "b", "a"), `both named "a"`}, {ps(""), "no name"}} {
		opt := NewAdam(c.ps, AdamDefaults())
		opt.ZeroGrad()
		opt.Step()
		if _, _, err := opt.StateDict(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("StateDict with names %q: %v, want an error saying %q", c.ps[0].Name, err, c.want)
		}
		if err := opt.LoadStateDict(nil, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LoadStateDict with names %q: %v, want an error saying %q", c.ps[0].Name, err, c.want)
		}
	}
	mustPanic(t, "negative SetLR", "learning rate", func() { NewSGD(ps("a"), SGDDefaults()).SetLR(-1) })
	p := ps("w")
	opt := NewAdam(p, AdamDefaults())
	p[0].Grad = tensor.New[float64](3)
	mustPanic(t, "gradient shape", "[2] but gradient of shape [3]", opt.Step)
}

func TestStateRoundTrip(t *testing.T) {
	grads := [][]float64{g1, g2, g3}
	for _, tc := range stepCases() {
		t.Run(tc.name, func(t *testing.T) {
			// Two steps on a, then its state into a fresh b over a copy of
			// the parameters: a third step must agree exactly.
			pa := newParam[float64]("f.w", p0)
			a := tc.make([]*autograd.Param[float64]{pa})
			for k := range 2 {
				setGrad(pa, grads[k])
				a.Step()
			}
			pb := newParam[float64]("f.w", pa.Value.Data())
			b := tc.make([]*autograd.Param[float64]{pb})
			b.SetLR(123) // restored from the state
			ts, meta, _ := a.StateDict()
			copied := make(map[string]*tensor.Tensor[float64])
			for n, x := range ts {
				copied[n] = x.Clone()
			}
			if err := b.LoadStateDict(copied, meta); err != nil {
				t.Fatal(err)
			}
			if b.LR() != a.LR() {
				t.Fatalf("lr %v after load, want %v", b.LR(), a.LR())
			}
			setGrad(pa, g3)
			setGrad(pb, g3)
			a.Step()
			b.Step()
			for j := range 2 {
				if pa.Value.Data()[j] != pb.Value.Data()[j] {
					t.Fatalf("after load: p[%d] = %v, want %v", j, pb.Value.Data()[j], pa.Value.Data()[j])
				}
			}
		})
	}
}

func TestStateDictNames(t *testing.T) {
	p := newParam[float32]("f.conv2.weight", []float64{1, 2})
	ts, meta, _ := NewAdam([]*autograd.Param[float32]{p}, AdamDefaults()).StateDict()
	for _, n := range []string{"optim.adam.exp_avg.f.conv2.weight", "optim.adam.exp_avg_sq.f.conv2.weight"} {
		if ts[n] == nil {
			t.Errorf("no tensor %q in %v", n, keys(ts))
		}
	}
	for k, v := range map[string]string{"optim.type": "adam", "optim.adam.lr": "0.001", "optim.adam.step.f.conv2.weight": "0", "optim.adam.beta2": "0.999"} {
		if meta[k] != v {
			t.Errorf("meta[%q] = %q, want %q", k, meta[k], v)
		}
	}
	for k := range meta {
		if !strings.HasPrefix(k, Prefix) {
			t.Errorf("metadata key %q lacks the prefix %q", k, Prefix)
		}
	}
}

func TestLoadStateDictErrors(t *testing.T) {
	fresh := func() (*Adam[float64], map[string]*tensor.Tensor[float64], map[string]string) {
		p := newParam[float64]("w", []float64{1, 2})
		opt := NewAdam([]*autograd.Param[float64]{p}, AdamDefaults())
		ts, meta, _ := opt.StateDict()
		return opt, ts, meta
	}
	for _, tc := range []struct {
		name, want string
		edit       func(ts map[string]*tensor.Tensor[float64], meta map[string]string)
	}{
		{"other kind", `"sgd" optimizer`, func(_ map[string]*tensor.Tensor[float64], m map[string]string) { m["optim.type"] = "sgd" }},
		{"no kind", `no "optim.type"`, func(_ map[string]*tensor.Tensor[float64], m map[string]string) { delete(m, "optim.type") }},
		{"bad lr", `"optim.adam.lr"`, func(_ map[string]*tensor.Tensor[float64], m map[string]string) { m["optim.adam.lr"] = "fast" }},
		{"missing step", `"optim.adam.step.w"`, func(_ map[string]*tensor.Tensor[float64], m map[string]string) { delete(m, "optim.adam.step.w") }},
		{"negative step", `"optim.adam.step.w"`, func(_ map[string]*tensor.Tensor[float64], m map[string]string) { m["optim.adam.step.w"] = "-1" }},
		{"missing tensor", `missing tensor "optim.adam.exp_avg.w"`, func(ts map[string]*tensor.Tensor[float64], _ map[string]string) {
			delete(ts, "optim.adam.exp_avg.w")
		}},
		{"extra tensor", `unexpected tensor "optim.adam.exp_avg.v"`, func(ts map[string]*tensor.Tensor[float64], _ map[string]string) {
			ts["optim.adam.exp_avg.v"] = tensor.New[float64](2)
		}},
		{"wrong shape", `tensor "optim.adam.exp_avg_sq.w" has shape [3]`, func(ts map[string]*tensor.Tensor[float64], _ map[string]string) {
			ts["optim.adam.exp_avg_sq.w"] = tensor.New[float64](3)
		}},
		{"negative second moment", `tensor "optim.adam.exp_avg_sq.w": element 1 is -1`, func(ts map[string]*tensor.Tensor[float64], _ map[string]string) {
			ts["optim.adam.exp_avg_sq.w"] = tensor.FromSlice([]float64{7, -1}, 2)
		}},
		{"NaN first moment", `tensor "optim.adam.exp_avg.w": element 0 is NaN`, func(ts map[string]*tensor.Tensor[float64], _ map[string]string) {
			ts["optim.adam.exp_avg.w"] = tensor.FromSlice([]float64{math.NaN(), 7}, 2)
		}},
		{"infinite second moment", `tensor "optim.adam.exp_avg_sq.w": element 1 is +Inf`, func(ts map[string]*tensor.Tensor[float64], _ map[string]string) {
			ts["optim.adam.exp_avg_sq.w"] = tensor.FromSlice([]float64{7, math.Inf(1)}, 2)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt, ts, meta := fresh()
			// A valid state to load, different from the optimizer's own.
			src := make(map[string]*tensor.Tensor[float64])
			for n := range ts {
				src[n] = tensor.Full[float64](7, 2)
			}
			meta["optim.adam.lr"] = "0.5"
			meta["optim.adam.step.w"] = "4"
			tc.edit(src, meta)
			err := opt.LoadStateDict(src, meta)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %s", err, tc.want)
			}
			// Nothing changed.
			ts2, meta2, _ := opt.StateDict()
			if ts2["optim.adam.exp_avg.w"].Data()[0] != 0 || meta2["optim.adam.lr"] != "0.001" || meta2["optim.adam.step.w"] != "0" {
				t.Fatalf("a failed load changed the state: %v %v", ts2, meta2)
			}
		})
	}
}
