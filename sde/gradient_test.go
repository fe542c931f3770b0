package sde

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/internal/revolve"
	"github.com/adamnode/adamnode/tensor"
)

// neural is a small neural SDE on a batch y [3, 2], time-dependent:
//
//	f(t, y) = (1 + t/2) tanh(y Wᵀ + b)
//	g(t, y) = ½ σ(a ⊙ y + c)                 (diagonal: g_i reads y_i only)
//	g(t, y) = 0.3 tanh(y Vᵀ) as [3, 2, 2]    (general, two Brownian motions)
type neural struct {
	noise              Noise
	w, b, a, c, v, y0p *autograd.Param[float64]
}

func newNeural(noise Noise, seed uint64) *neural {
	r := rand.New(rand.NewPCG(seed, 1))
	p := func(name string, shape ...int) *autograd.Param[float64] {
		return autograd.NewParam(name, tensor.RandN[float64](r, 0, 0.7, shape...))
	}
	return &neural{noise: noise, w: p("W", 2, 2), b: p("b", 2), a: p("a", 2), c: p("c", 2), v: p("V", 4, 2), y0p: p("y0", 3, 2)}
}

func (m *neural) Drift(tp *autograd.Tape[float64], t float64, y autograd.Var[float64]) autograd.Var[float64] {
	return autograd.Scale(autograd.Tanh(autograd.Linear(y, tp.Param(m.w), tp.Param(m.b))), 1+t/2)
}

func (m *neural) Diffusion(tp *autograd.Tape[float64], t float64, y autograd.Var[float64]) autograd.Var[float64] {
	if m.noise == General {
		return autograd.Reshape(autograd.Scale(autograd.Tanh(autograd.Linear(y, tp.Param(m.v), autograd.Var[float64]{})), 0.3), 3, 2, 2)
	}
	return autograd.Scale(autograd.Sigmoid(autograd.Add(autograd.Mul(y, tp.Param(m.a)), tp.Param(m.c))), 0.5)
}

func (m *neural) Params() []*autograd.Param[float64] {
	if m.noise == General {
		return []*autograd.Param[float64]{m.w, m.b, m.v}
	}
	return []*autograd.Param[float64]{m.w, m.b, m.a, m.c}
}

// all lists the SDE's parameters and y0.
func (m *neural) all() []*autograd.Param[float64] { return append(m.Params(), m.y0p) }

func (m *neural) pathShape() []int {
	if m.noise == Scalar {
		return []int{3, 1}
	}
	return []int{3, 2}
}

// loss solves to ts = 0, 0.5, 1 and returns Σ r₁ ⊙ y(0.5) + Σ r₂ ⊙ y(1)
// for fixed weights r.
func (m *neural) loss(path Path[float64], opt Options) func(tp *autograd.Tape[float64]) (autograd.Var[float64], error) {
	r1 := tensor.FromSlice([]float64{0.3, -1.2, 0.8, 0.5, -0.4, 1.1}, 3, 2)
	r2 := tensor.FromSlice([]float64{1.0, 0.2, -0.7, 0.9, 0.6, -0.3}, 3, 2)
	return func(tp *autograd.Tape[float64]) (autograd.Var[float64], error) {
		opt.Noise = m.noise
		ys, _, err := Solve[float64](tp, m, tp.Param(m.y0p), []float64{0, 0.5, 1}, path, opt)
		if err != nil {
			return autograd.Var[float64]{}, err
		}
		return autograd.Add(autograd.Sum(autograd.Mul(ys[1], tp.Const(r1))), autograd.Sum(autograd.Mul(ys[2], tp.Const(r2)))), nil
	}
}

// grads runs loss with gradients on and returns its value and the
// gradients of the parameters and y0, by name.
func grads(t *testing.T, m *neural, f func(tp *autograd.Tape[float64]) (autograd.Var[float64], error)) (float64, map[string][]float64) {
	t.Helper()
	autograd.ZeroGrads(m.all())
	tp := autograd.NewTape(engine64())
	l, err := f(tp)
	if err != nil {
		t.Fatal(err)
	}
	if err := tp.Backward(l); err != nil {
		t.Fatal(err)
	}
	out := map[string][]float64{}
	for _, p := range m.all() {
		out[p.Name] = append([]float64(nil), p.Grad.ReadData()...)
	}
	return l.Item(), out
}

// TestCheckpointMatchesBackprop: the Checkpoint gradient replays the
// segments between checkpoints and gives backprop's loss and gradients to
// rounding, for several segment lengths (1 step, the default √N, more
// steps than the solve has), fixed and adaptive steps, and a method with a
// Lévy area and one with a JVP.
func TestCheckpointMatchesBackprop(t *testing.T) {
	for _, tc := range []struct {
		method   string
		every    int
		adaptive bool
	}{
		{EulerMaruyama, 0, false},
		{Heun, 1, false},
		{Heun, 0, true},
		{Milstein, 3, false},
		{SRI2, 100, false},
	} {
		t.Run(fmt.Sprintf("%s/every %d/adaptive %v", tc.method, tc.every, tc.adaptive), func(t *testing.T) {
			m := newNeural(Diagonal, 3)
			b := mustBrownian[float64](t, 0, 1, m.pathShape(), BrownianOptions{Seed: 5})
			opt := Options{Method: tc.method, Step: 1.0 / 20, Adaptive: tc.adaptive, RTol: 1e-3, ATol: 1e-4}
			lb, gb := grads(t, m, m.loss(b, opt))
			opt.Mode = Checkpoint{Every: tc.every}
			lc, gc := grads(t, m, m.loss(b, opt))
			if lb != lc {
				t.Errorf("loss %.17g with Backprop, %.17g with Checkpoint", lb, lc)
			}
			if d := cmp.Diff(gb, gc, cmpopts.EquateApprox(1e-12, 1e-14)); d != "" {
				t.Errorf("gradients (-backprop +checkpoint):\n%s", d)
			}
		})
	}
}

// TestReversibleMatchesBackprop: reversible Heun's algebraic backward
// (Gradient Reversible) gives the loss and the gradients of backprop
// through the same solve, to a relative 1e-10 (the reconstruction is exact
// but for rounding), for diagonal, scalar and general noise.
func TestReversibleMatchesBackprop(t *testing.T) {
	for _, noise := range []Noise{Diagonal, Scalar, General} {
		t.Run(noise.String(), func(t *testing.T) {
			m := newNeural(noise, 3)
			b := mustBrownian[float64](t, 0, 1, m.pathShape(), BrownianOptions{Seed: 5})
			lb, gb := grads(t, m, m.loss(b, Options{Method: ReversibleHeun, Step: 1.0 / 32}))
			lr, gr := grads(t, m, m.loss(b, Options{Method: ReversibleHeun, Step: 1.0 / 32, Mode: Reversible{}}))
			if lb != lr {
				t.Errorf("loss %.17g with Backprop, %.17g with Reversible", lb, lr)
			}
			if d := cmp.Diff(gb, gr, cmpopts.EquateApprox(1e-10, 1e-13)); d != "" {
				t.Errorf("gradients (-backprop +reversible):\n%s", d)
			}
			for name, g := range gb {
				if cmp.Equal(g, make([]float64, len(g))) {
					t.Errorf("gradient of %s is zero", name)
				}
			}
		})
	}
}

// TestGradientsCentralDifferences: the gradients of a loss of y(0.5) and
// y(1) with respect to y0 and every parameter, by backprop through each
// method, by reversible Heun's backward and by checkpointing, against
// central differences on the same fixed Brownian path, float64, every
// element. (The Adjoint gradient is not the discrete solve's: see
// TestAdjointConverges.)
func TestGradientsCentralDifferences(t *testing.T) {
	for _, tc := range []struct {
		method string
		noise  Noise
		opt    Options
	}{
		{EulerMaruyama, Diagonal, Options{}},
		{EulerMaruyama, General, Options{}},
		{Milstein, Diagonal, Options{}},
		{Milstein, Diagonal, Options{DerivativeFree: true}},
		{SRK, Diagonal, Options{}},
		{SRI2, Diagonal, Options{}},
		{SRA1, General, Options{}},
		{SRA1, Diagonal, Options{Mode: Recursive{Budget: 2}}},
		{Heun, General, Options{}},
		{ReversibleHeun, Diagonal, Options{}},
		{ReversibleHeun, Diagonal, Options{Mode: Reversible{}}},
		{ReversibleHeun, General, Options{Mode: Reversible{}}},
		{ReversibleHeun, Scalar, Options{Mode: Reversible{}}},
		{SRK, Scalar, Options{Mode: Checkpoint{}}},
	} {
		name := fmt.Sprintf("%s/%v", tc.method, tc.noise)
		if tc.opt.DerivativeFree {
			name += "/derivative-free"
		}
		if tc.opt.Mode == (Reversible{}) {
			name += "/reversible"
		}
		if tc.opt.Mode != nil {
			name += "/" + tc.opt.Mode.String()
		}
		t.Run(name, func(t *testing.T) {
			m := newNeural(tc.noise, 11)
			b := mustBrownian[float64](t, 0, 1, m.pathShape(), BrownianOptions{Seed: 6})
			opt := tc.opt
			opt.Method, opt.Step = tc.method, 0.1
			rep, err := autograd.CheckGradients(m.loss(b, opt), m.all(), autograd.GradCheckOptions{AbsTol: 1e-8, RelTol: 1e-6, Engine: engine64()})
			if err != nil {
				t.Fatalf("%v\n%+v", err, rep)
			}
		})
	}
}

// TestReversibleMemory: the Reversible and Adjoint gradients record a
// fixed number of nodes whatever the number of steps (Backprop's grow with
// them); Reversible's backward pass evaluates (f, g) once per step, for
// the reconstruction and the vector–Jacobian product both, plus once at the
// last step and a VJP at t0; Adjoint's takes two VJPs per step.
func TestReversibleMemory(t *testing.T) {
	m := newNeural(Diagonal, 3)
	b := mustBrownian[float64](t, 0, 1, m.pathShape(), BrownianOptions{Seed: 5})
	recordWith := func(steps int, g GradMode, method string) (int, *Stats) {
		tp := autograd.NewTape(engine64())
		ys, st, err := Solve[float64](tp, m, tp.Param(m.y0p), []float64{0, 1}, b, Options{Method: method, Step: 1 / float64(steps), Mode: g})
		if err != nil {
			t.Fatal(err)
		}
		n := tp.Len()
		if err := tp.Backward(autograd.Sum(ys[1])); err != nil {
			t.Fatal(err)
		}
		return n, st
	}
	record := func(steps int, g GradMode) (int, *Stats) { return recordWith(steps, g, ReversibleHeun) }
	n8, _ := record(8, Reversible{})
	n128, st := record(128, Reversible{})
	if n8 != n128 {
		t.Errorf("Reversible: %d tape nodes for 8 steps, %d for 128; want the same", n8, n128)
	}
	if st.Drift > 1e-12 {
		t.Errorf("Reversible, 128 steps: y0 reconstructed to %.3g, want rounding (1e-12)", st.Drift)
	}
	if st.BackwardEvals != 128+2 || st.Steps != 128 {
		t.Errorf("Reversible, 128 steps: %d steps and %d backward evaluations, want 128 and %d", st.Steps, st.BackwardEvals, 128+2)
	}
	c16, st := recordWith(16, Checkpoint{}, Heun)
	if st.BackwardEvals != 2*16 {
		t.Errorf("Checkpoint, Heun, 16 steps: %d evaluations of f in the replays, want 32", st.BackwardEvals)
	}
	if c128, _ := recordWith(128, Checkpoint{}, Heun); c16 != c128 {
		t.Errorf("Checkpoint: %d tape nodes for 16 steps, %d for 128; want the same", c16, c128)
	}
	a8, _ := record(8, Adjoint{})
	a128, st := record(128, Adjoint{})
	t.Logf("Adjoint, 128 steps: y0 reconstructed to %.3g", st.Drift)
	if st.Drift == 0 || st.Drift > 1e-4 {
		t.Errorf("Adjoint, 128 steps: y0 reconstructed to %.3g, want a small nonzero error (a backward solve)", st.Drift)
	}
	if a8 != a128 || st.BackwardEvals != 2*128 {
		t.Errorf("Adjoint: %d tape nodes for 8 steps, %d for 128, %d backward evaluations for 128; want the same and %d", a8, a128, st.BackwardEvals, 2*128)
	}
	b8, _ := record(8, Backprop{})
	b128, _ := record(128, Backprop{})
	if b128 < 10*b8 {
		t.Errorf("Backprop: %d tape nodes for 8 steps, %d for 128; want them to grow with the steps", b8, b128)
	}
	t.Logf("tape nodes: Reversible %d (8 and 128 steps), Backprop %d and %d", n8, b8, b128)
}

// TestReversibleUnlistedParam: a parameter the SDE reads but does not list
// in Params() makes the Reversible backward fail with an error naming it
// (its gradient would otherwise be lost), not panic.
func TestReversibleUnlistedParam(t *testing.T) {
	m := newNeural(Diagonal, 3)
	s := Funcs[float64]{F: m.Drift, G: m.Diffusion, Parameters: []*autograd.Param[float64]{m.w, m.b, m.a}} // c left out
	b := mustBrownian[float64](t, 0, 1, m.pathShape(), BrownianOptions{Seed: 5})
	tp := autograd.NewTape(engine64())
	ys, _, err := Solve[float64](tp, s, tp.Param(m.y0p), []float64{0, 1}, b, Options{Method: ReversibleHeun, Step: 0.25, Mode: Reversible{}})
	if err != nil {
		t.Fatal(err)
	}
	err = tp.Backward(autograd.Sum(ys[1]))
	if err == nil || !strings.Contains(err.Error(), `"c"`) {
		t.Errorf("Backward: error %v, want one naming the unlisted parameter \"c\"", err)
	}
}

// TestFloat32: the methods run in float32 on a float32 Brownian path with
// the float64 path's increments rounded, and agree with the float64 solve
// to a relative 1e-4 after 64 steps; the Reversible gradient in float32
// agrees with float64's to 1e-3.
func TestFloat32(t *testing.T) {
	const n = 50
	f32 := Funcs[float32]{
		F: func(tp *autograd.Tape[float32], t float64, y autograd.Var[float32]) autograd.Var[float32] {
			return autograd.Scale(autograd.Tanh(y), 0.5)
		},
		G: func(tp *autograd.Tape[float32], t float64, y autograd.Var[float32]) autograd.Var[float32] {
			return autograd.Scale(autograd.Sigmoid(y), 0.8)
		},
	}
	f64 := Funcs[float64]{
		F: func(tp *autograd.Tape[float64], t float64, y autograd.Var[float64]) autograd.Var[float64] {
			return autograd.Scale(autograd.Tanh(y), 0.5)
		},
		G: func(tp *autograd.Tape[float64], t float64, y autograd.Var[float64]) autograd.Var[float64] {
			return autograd.Scale(autograd.Sigmoid(y), 0.8)
		},
	}
	b32 := mustBrownian[float32](t, 0, 1, []int{n}, BrownianOptions{Seed: 9})
	b64 := mustBrownian[float64](t, 0, 1, []int{n}, BrownianOptions{Seed: 9})
	for _, method := range MethodNames() {
		t.Run(method, func(t *testing.T) {
			opt := Options{Method: method, Step: 1.0 / 64}
			if method == ReversibleHeun {
				opt.Mode = Reversible{}
			}
			tp32 := autograd.NewTape(tensor.Default().Float32())
			x32 := tp32.Input(tensor.Full[float32](0.3, n))
			y32, _, err := Solve[float32](tp32, f32, x32, []float64{0, 1}, b32, opt)
			if err != nil {
				t.Fatal(err)
			}
			tp64 := autograd.NewTape(engine64())
			x64 := tp64.Input(tensor.Full(0.3, n))
			y64, _, err := Solve[float64](tp64, f64, x64, []float64{0, 1}, b64, opt)
			if err != nil {
				t.Fatal(err)
			}
			got := toF64(y32[1].Value().ReadData())
			if d := cmp.Diff(y64[1].Value().ReadData(), got, cmpopts.EquateApprox(1e-4, 1e-6)); d != "" {
				t.Errorf("y(1) float32 against float64 (-float64 +float32):\n%s", d)
			}
			if err := tp32.Backward(autograd.Sum(y32[1])); err != nil {
				t.Fatal(err)
			}
			if err := tp64.Backward(autograd.Sum(y64[1])); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(x64.Grad().ReadData(), toF64(x32.Grad().ReadData()), cmpopts.EquateApprox(1e-3, 1e-6)); d != "" {
				t.Errorf("∂Σy(1)/∂y0 float32 against float64 (-float64 +float32):\n%s", d)
			}
		})
	}
}

// relErr is max|a − b| over max|b| across the gradients by name.
func relErr(a, b map[string][]float64) float64 {
	var num, den float64
	for name, g := range b {
		for i, v := range g {
			num = max(num, math.Abs(a[name][i]-v))
			den = max(den, math.Abs(v))
		}
	}
	return num / den
}

// TestAdjointConverges: the stochastic adjoint's gradients (Heun forward,
// the adjoint SDE solved backward on the same path) approach those of
// backprop through a fine solve (1/1024) as the step shrinks, with the
// fitted order of the largest error (relative to the largest gradient) in
// the band given for diagonal noise (commutative: about 1) and general
// noise (about ½); at each step they also stay near backprop's at the
// same step.
func TestAdjointConverges(t *testing.T) {
	hs := []float64{1.0 / 8, 1.0 / 16, 1.0 / 32, 1.0 / 64}
	for _, tc := range []struct {
		noise  Noise
		method string
		lo, hi float64
	}{
		{Diagonal, Heun, 0.8, 1.3},
		{Diagonal, ReversibleHeun, 0.8, 1.3},
		{General, Heun, 0.35, 1.3},
	} {
		t.Run(tc.noise.String()+"/"+tc.method, func(t *testing.T) {
			m := newNeural(tc.noise, 4)
			b := mustBrownian[float64](t, 0, 1, m.pathShape(), BrownianOptions{Seed: 12})
			_, ref := grads(t, m, m.loss(b, Options{Method: tc.method, Step: 1.0 / 1024}))
			var errs []float64
			for _, h := range hs {
				_, ga := grads(t, m, m.loss(b, Options{Method: tc.method, Step: h, Mode: Adjoint{}}))
				_, gb := grads(t, m, m.loss(b, Options{Method: tc.method, Step: h}))
				errs = append(errs, relErr(ga, ref))
				if e, eb := relErr(ga, gb), relErr(gb, ref); e > 3*eb+1e-3 {
					t.Errorf("h = %g: adjoint and backprop differ by %.3g, backprop and the fine solve by %.3g", h, e, eb)
				}
			}
			p := slope(hs, errs)
			t.Logf("errors %.3g, fitted order %.2f", errs, p)
			if p < tc.lo || p > tc.hi || errs[len(errs)-1] > 0.05 {
				t.Errorf("adjoint gradient errors %.3g at h = %g: fitted order %.2f, want in [%g, %g] and the last below 0.05", errs, hs, p, tc.lo, tc.hi)
			}
		})
	}
}

// TestBinomialCheckpoint: the Recursive gradient (binomial checkpointing
// with a Budget) gives backprop's loss and gradients to
// rounding for budgets from 1 (every step recomputed from y0) to more than
// the steps, fixed and adaptive steps, a method with a Lévy area and one
// with a JVP; it never keeps more states than the budget, and re-advances
// each of the N steps at most r times, r the least with C(budget+r, r) ≥ N.
func TestBinomialCheckpoint(t *testing.T) {
	for _, tc := range []struct {
		method   string
		budget   int
		adaptive bool
	}{
		{EulerMaruyama, 1, false},
		{EulerMaruyama, 2, false},
		{EulerMaruyama, 4, false},
		{EulerMaruyama, 20, false},
		{EulerMaruyama, 100, false},
		{Heun, 3, true},
		{Milstein, 5, false},
		{SRI2, 3, false},
	} {
		t.Run(fmt.Sprintf("%s/budget %d/adaptive %v", tc.method, tc.budget, tc.adaptive), func(t *testing.T) {
			m := newNeural(Diagonal, 3)
			b := mustBrownian[float64](t, 0, 1, m.pathShape(), BrownianOptions{Seed: 5})
			opt := Options{Method: tc.method, Step: 1.0 / 20, Adaptive: tc.adaptive, RTol: 1e-3, ATol: 1e-4}
			lb, gb := grads(t, m, m.loss(b, opt))
			opt.Mode = Recursive{Budget: tc.budget}
			lc, gc := grads(t, m, m.loss(b, opt))
			if lb != lc {
				t.Errorf("loss %.17g with Backprop, %.17g with a budget", lb, lc)
			}
			if d := cmp.Diff(gb, gc, cmpopts.EquateApprox(1e-12, 1e-14)); d != "" {
				t.Errorf("gradients (-backprop +binomial):\n%s", d)
			}

			// States kept and steps re-advanced, counted with Euler's one
			// drift evaluation per step.
			if tc.method != EulerMaruyama {
				return
			}
			tp := autograd.NewTape(engine64())
			defer tp.Release()
			opt.Noise = m.noise
			ys, st, err := Solve[float64](tp, m, tp.Param(m.y0p), []float64{0, 0.5, 1}, b, opt)
			if err != nil {
				t.Fatal(err)
			}
			if err := tp.Backward(autograd.Sum(ys[2])); err != nil {
				t.Fatal(err)
			}
			n := st.Steps
			r := 0
			for revolve.Binomial(tc.budget, r) < n {
				r++
			}
			readvanced := st.BackwardEvals - n // each step is taped once
			t.Logf("%d steps, budget %d: %d states kept at most, %d steps re-advanced (bound r·N = %d·%d)", n, tc.budget, st.Stored, readvanced, r, n)
			if st.Stored > tc.budget || st.Stored < 1 {
				t.Errorf("%d states kept at once, budget %d", st.Stored, tc.budget)
			}
			if readvanced > r*n {
				t.Errorf("%d steps re-advanced, more than r·N = %d·%d", readvanced, r, n)
			}
		})
	}
}
