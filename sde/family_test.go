package sde

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// spring is the field f(h) = 4h, a linear restoring force in HBNODE's
// convention (h′ = −m, m′ = f − γm: h″ + γh′ + 4h = 0), or, with w set,
// tanh(h wᵀ).
type spring struct{ w *autograd.Param[float64] }

func (s spring) ForwardT(tp *autograd.Tape[float64], _ float64, h autograd.Var[float64]) autograd.Var[float64] {
	if s.w == nil {
		return autograd.Scale(h, 4)
	}
	return autograd.Tanh(autograd.Linear(h, tp.Param(s.w), autograd.Var[float64]{}))
}

func (s spring) Params() []*autograd.Param[float64] {
	if s.w == nil {
		return nil
	}
	return []*autograd.Param[float64]{s.w}
}

// TestFamilyHBNODE: odeblock's HBNODE with noise on its momentum. Its drift
// is the family's (the Euler–Maruyama step with zero increments is
// odeblock's Euler step to the bit); its diffusion is σ = softplus(σ_raw)
// on m's rows and 0 on h's; and with the linear force spring{}, whose
// additive-noise SDE has the mean of the ODE, the mean of h(1) and m(1)
// over 4000 paths solved by sra1 is the noise-free solve's within five
// standard errors, which is odeblock's dopri5 solution of the ODE to 1e-4.
func TestFamilyHBNODE(t *testing.T) {
	const n = 4000
	hb := odeblock.NewHBNODE[float64](spring{}, -1)
	fam := NewFamily[float64](hb, 2, 1, 0) // σ = log 2
	eng := engine64()
	z0 := tensor.New[float64](2*n, 1)
	for i := range n {
		z0.Data()[i] = 1 // h0 = 1, m0 = 0
	}

	tp := autograd.NewTape(eng)
	tp.SetNoGrad(true)
	defer tp.Release()
	g := fam.Diffusion(tp, 0, tp.Const(z0)).Value().ReadData()
	for i, v := range g {
		if want := map[bool]float64{true: math.Log(2), false: 0}[i >= n]; math.Abs(v-want) > 1e-15 {
			t.Fatalf("g[%d] = %g, want %g", i, v, want)
		}
	}

	// Euler with zero increments is the ODE's Euler step.
	zero := &replay{shape: []int{2 * n, 1}, dt: 0.25, steps: make([]stepDoc, 4)}
	for k := range zero.steps {
		zero.steps[k] = stepDoc{T0: float64(k) * 0.25, W: make([]float64, 2*n), H: make([]float64, 2*n)}
	}
	em, _, err := Solve[float64](tp, fam, tp.Const(z0), []float64{0, 1}, zero, Options{Method: EulerMaruyama, Step: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	ode := &odeblock.Block[float64]{Dynamics: hb, Solver: odeblock.Options{Method: "euler", Step: 0.25}}
	want, err := ode.Forward(tp, tp.Const(z0))
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range em[1].Value().ReadData() {
		if w := want.Value().ReadData()[i]; v != w {
			t.Fatalf("Euler–Maruyama with zero increments z[%d] = %.17g, odeblock's Euler %.17g", i, v, w)
		}
	}

	// The mean follows the ODE.
	b := mustBrownian[float64](t, 0, 1, []int{2 * n, 1}, BrownianOptions{Seed: 3})
	noisy, _, err := Solve[float64](tp, fam, tp.Const(z0), []float64{0, 1}, b, Options{Method: SRA1, Step: 1.0 / 128})
	if err != nil {
		t.Fatal(err)
	}
	quiet := NewFamily[float64](hb, 2, 1, -60) // σ ≈ 1e-26
	det, _, err := Solve[float64](tp, quiet, tp.Const(z0.Slice(0, 2*n)), []float64{0, 1}, b, Options{Method: SRA1, Step: 1.0 / 128})
	if err != nil {
		t.Fatal(err)
	}
	exact := &odeblock.Block[float64]{Dynamics: hb, Solver: odeblock.Options{Method: "dopri5", RTol: 1e-10, ATol: 1e-10}}
	ref, err := exact.Forward(tp, tp.Const(tensor.FromSlice([]float64{1, 0}, 2, 1)))
	if err != nil {
		t.Fatal(err)
	}
	y, d := noisy[1].Value().ReadData(), det[1].Value().ReadData()
	for part, name := range []string{"h", "m"} {
		mean, v := meanVar(y[part*n : (part+1)*n])
		se := math.Sqrt(v / n)
		t.Logf("%s(1): mean %.4f ± %.4f over %d paths, noise-free %.6f, dopri5 %.6f", name, mean, se, n, d[part*n], ref.Value().At(part, 0))
		if math.Abs(mean-d[part*n]) > 5*se {
			t.Errorf("%s(1): mean %.4f, the noise-free solve %.4f: more than 5 standard errors (%.4f) apart", name, mean, d[part*n], se)
		}
		if math.Abs(d[part*n]-ref.Value().At(part, 0)) > 1e-4 {
			t.Errorf("%s(1): noise-free sra1 %.6f, dopri5 %.6f", name, d[part*n], ref.Value().At(part, 0))
		}
	}
}

// TestFamilyGradients: gradients through a stochastic HBNODE (a tanh layer
// force, γ_raw and σ_raw learnable, σ per feature) in a Block against
// central differences on a fixed path, Reversible and Backprop; a Part out
// of range is an error, not a panic.
func TestFamilyGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 3))
	w := autograd.NewParam("W", tensor.RandN[float64](r, 0, 0.7, 2, 2))
	hb := odeblock.NewHBNODE[float64](spring{w: w}, -0.5)
	fam := &Family[float64]{F: hb, Parts: 2, Part: 1, SigmaRaw: autograd.NewParam("σ_raw", tensor.FromSlice([]float64{-0.3, 0.4}, 2))}
	z0 := autograd.NewParam("z0", tensor.RandN[float64](r, 0, 1, 6, 2))
	all := append(fam.Params(), z0)
	b := mustBrownian[float64](t, 0, 1, []int{6, 2}, BrownianOptions{Seed: 8})
	for _, g := range []GradMode{Backprop{}, Reversible{}} {
		loss := func(tp *autograd.Tape[float64]) (autograd.Var[float64], error) {
			blk := &Block[float64]{SDE: fam, Options: Options{Method: ReversibleHeun, Step: 0.125, Mode: g}, Path: b}
			y, err := blk.Forward(tp, tp.Param(z0))
			if err != nil {
				return y, err
			}
			return autograd.Sum(autograd.Square(y)), nil
		}
		if rep, err := autograd.CheckGradients(loss, all, autograd.GradCheckOptions{AbsTol: 1e-8, RelTol: 1e-6, Engine: engine64()}); err != nil {
			t.Fatalf("gradient %v: %v\n%+v", g, err, rep)
		}
	}
	bad := &Family[float64]{F: hb, Parts: 2, Part: 2, SigmaRaw: fam.SigmaRaw}
	tp := autograd.NewTape(engine64())
	if _, _, err := Solve[float64](tp, bad, tp.Param(z0), []float64{0, 1}, b, Options{Step: 0.5}); err == nil {
		t.Error("noise on part 2 of 2: no error")
	}
}
