package sde

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

func engine64() tensor.Engine[float64] { return tensor.Default().Float64() }

// gbm is geometric Brownian motion with several noise layouts, paths in
// the rows of the state:
//
//	diagonal: y [N],    dy_i = μ y_i dt + σ y_i dW_i
//	scalar:   y [N, 2], dy_ij = μ_j y_ij dt + σ_j y_ij dW_i
//	general:  y [N, 2], dy_ij = μ_j y_ij dt + y_ij Σ_k S_jk dW_ik
//
// with the exact Itô solution y_ij(t) = y0 exp((μ_j − ½Σ_k S_jk²) t +
// Σ_k S_jk W_ik(t)) on the same path; read as Stratonovich, without the
// −½Σ S² correction.
type gbm struct {
	noise Noise
	n     int
	mu    []float64 // per column
	s     [][]float64
}

var gbmDiag = gbm{noise: Diagonal, mu: []float64{0.5}, s: [][]float64{{0.8}}}
var gbmScalar = gbm{noise: Scalar, mu: []float64{0.5, -0.2}, s: [][]float64{{0.8}, {0.5}}}
var gbmGeneral = gbm{noise: General, mu: []float64{0.5, -0.2}, s: [][]float64{{0.6, 0.3}, {-0.4, 0.5}}}

func (g gbm) cols() int { return len(g.mu) }

func (g gbm) yShape(n int) []int {
	if g.noise == Diagonal {
		return []int{n}
	}
	return []int{n, g.cols()}
}

func (g gbm) wShape(n int) []int {
	switch g.noise {
	case Diagonal:
		return []int{n}
	case Scalar:
		return []int{n, 1}
	}
	return []int{n, len(g.s[0])}
}

func (g gbm) sde() SDE[float64] {
	c := g.cols()
	mu := tensor.FromSlice(g.mu, 1, c)
	sig := make([]float64, 0, c)
	for _, r := range g.s {
		sig = append(sig, r...)
	}
	k := len(g.s[0])
	return Funcs[float64]{
		F: func(tp *autograd.Tape[float64], t float64, y autograd.Var[float64]) autograd.Var[float64] {
			if g.noise == Diagonal {
				return autograd.Scale(y, g.mu[0])
			}
			return autograd.Mul(y, tp.Const(mu))
		},
		G: func(tp *autograd.Tape[float64], t float64, y autograd.Var[float64]) autograd.Var[float64] {
			switch g.noise {
			case Diagonal:
				return autograd.Scale(y, g.s[0][0])
			case Scalar:
				return autograd.Mul(y, tp.Const(tensor.FromSlice(sig, 1, c)))
			}
			n := y.Shape()[0]
			return autograd.Mul(autograd.Reshape(y, n, c, 1), tp.Const(tensor.FromSlice(sig, 1, c, k)))
		},
	}
}

// exact returns the exact solution at t1 = 1 from y0 = 1 on b's path.
func (g gbm) exact(t *testing.T, b *Brownian[float64], n int, calc Calculus) []float64 {
	w := mustW(t, b, 0, 1)
	c, k := g.cols(), len(g.s[0])
	out := make([]float64, 0, n*c)
	for i := range n {
		for j := range c {
			e := g.mu[j]
			for l := range k {
				if calc == Ito {
					e -= g.s[j][l] * g.s[j][l] / 2
				}
				switch g.noise {
				case Diagonal:
					e += g.s[j][l] * w[i]
				case Scalar:
					e += g.s[j][l] * w[i]
				default:
					e += g.s[j][l] * w[i*k+l]
				}
			}
			out = append(out, math.Exp(e))
		}
	}
	return out
}

func solveGBM(t *testing.T, g gbm, b *Brownian[float64], n int, opt Options) []float64 {
	t.Helper()
	tp := autograd.NewTape(engine64())
	tp.SetNoGrad(true)
	opt.Noise = g.noise
	y0 := tensor.Full(1.0, g.yShape(n)...)
	ys, _, err := Solve[float64](tp, g.sde(), tp.Const(y0), []float64{0, 1}, b, opt)
	if err != nil {
		t.Fatal(err)
	}
	return ys[1].Value().Clone().Data()
}

// slope is the least-squares slope of log(err) against log(h).
func slope(hs, errs []float64) float64 {
	var mx, my float64
	for i := range hs {
		mx += math.Log(hs[i])
		my += math.Log(errs[i])
	}
	mx /= float64(len(hs))
	my /= float64(len(hs))
	var sxy, sxx float64
	for i := range hs {
		dx := math.Log(hs[i]) - mx
		sxy += dx * (math.Log(errs[i]) - my)
		sxx += dx * dx
	}
	return sxy / sxx
}

// TestStrongOrder: the mean absolute error at t = 1 against the exact
// solution of geometric Brownian motion on the same Brownian path, over
// 1000 paths and steps 1/8 … 1/128, falls as h^p with the fitted p in the
// method's band: ½ for Euler–Maruyama, 1 for the others on these
// commutative noises. The bands are ±0.15 around the measured slopes
// printed with -v; the mean over 1000 paths has about 3% noise per point.
func TestStrongOrder(t *testing.T) {
	const n = 1000
	hs := []float64{1.0 / 8, 1.0 / 16, 1.0 / 32, 1.0 / 64, 1.0 / 128}
	for _, tc := range []struct {
		method         string
		derivativeFree bool
		g              gbm
		lo, hi         float64
	}{
		{EulerMaruyama, false, gbmDiag, 0.4, 0.7},
		{EulerMaruyama, false, gbmScalar, 0.4, 0.7},
		{EulerMaruyama, false, gbmGeneral, 0.4, 0.7},
		{Milstein, false, gbmDiag, 0.85, 1.15},
		{Milstein, true, gbmDiag, 0.85, 1.15},
		{Milstein, false, gbmScalar, 0.85, 1.15},
		{Milstein, true, gbmScalar, 0.85, 1.15},
		{SRK, false, gbmDiag, 0.85, 1.15},
		{SRK, false, gbmScalar, 0.85, 1.15},
		{SRI2, false, gbmDiag, 1.35, 1.65},
		{SRI2, false, gbmScalar, 1.35, 1.65},
		{Heun, false, gbmDiag, 0.85, 1.15},
		{Heun, false, gbmScalar, 0.85, 1.15},
		{Heun, false, gbmGeneral, 0.85, 1.15},
		{ReversibleHeun, false, gbmDiag, 0.85, 1.15},
		{ReversibleHeun, false, gbmGeneral, 0.85, 1.15},
	} {
		name := fmt.Sprintf("%s/%v", tc.method, tc.g.noise)
		if tc.derivativeFree {
			name += "/derivative-free"
		}
		t.Run(name, func(t *testing.T) {
			b := mustBrownian[float64](t, 0, 1, tc.g.wShape(n), BrownianOptions{Seed: 42})
			calc, _ := MethodCalculus(tc.method)
			exact := tc.g.exact(t, b, n, calc)
			errs := make([]float64, len(hs))
			for i, h := range hs {
				y := solveGBM(t, tc.g, b, n, Options{Method: tc.method, Step: h, DerivativeFree: tc.derivativeFree})
				for j := range y {
					errs[i] += math.Abs(y[j]-exact[j]) / float64(len(y))
				}
			}
			p := slope(hs, errs)
			t.Logf("errors %.3g, fitted strong order %.3f", errs, p)
			if p < tc.lo || p > tc.hi {
				t.Errorf("fitted strong order %.3f, want in [%g, %g] (errors %.3g at h = %g)", p, tc.lo, tc.hi, errs, hs)
			}
		})
	}
}

// TestWeakOrderEuler: Euler–Maruyama on geometric Brownian motion has the
// mean E y_N = (1 + μh)^N exactly, so its weak error e^μ − (1 + μh)^(1/h)
// is of order 1. Measured with the exact solution on the same paths as a
// control variate (mean of y_h − y over 20000 paths, whose expectation is
// the weak error and whose noise is the strong error over √20000), the
// error agrees with the formula within five standard errors and its
// fitted order is 1 ± 0.2 (measured 0.93; the formula's own slope over
// these steps, not yet asymptotic, is 0.92).
func TestWeakOrderEuler(t *testing.T) {
	const n = 20000
	g := gbmDiag
	mu := g.mu[0]
	b := mustBrownian[float64](t, 0, 1, []int{n}, BrownianOptions{Seed: 7})
	exact := g.exact(t, b, n, Ito)
	hs := []float64{1.0 / 2, 1.0 / 4, 1.0 / 8, 1.0 / 16}
	var errs []float64
	for _, h := range hs {
		y := solveGBM(t, g, b, n, Options{Method: EulerMaruyama, Step: h})
		d := make([]float64, n)
		for i := range d {
			d[i] = y[i] - exact[i]
		}
		m, v := meanVar(d)
		want := math.Pow(1+mu*h, 1/h) - math.Exp(mu)
		if se := math.Sqrt(v / n); math.Abs(m-want) > 5*se {
			t.Errorf("h = %g: weak error %.5f, want %.5f ± %.5f", h, m, want, 5*se)
		}
		errs = append(errs, math.Abs(m))
	}
	p := slope(hs, errs)
	t.Logf("weak errors %.3g, fitted weak order %.3f", errs, p)
	if math.Abs(p-1) > 0.2 {
		t.Errorf("fitted weak order %.3f, want 1 ± 0.2", p)
	}
}

// TestOneStep: one step of every method from y = 2 on dy = a y dt + b y dW
// (diagonal noise, one element) with a given ΔW, against the formula
// written out by hand.
func TestOneStep(t *testing.T) {
	const a, bb, y, h, dw = 0.7, 0.3, 2.0, 0.1, 0.25
	sq := math.Sqrt(h)
	f := func(y float64) float64 { return a * y }
	g := func(y float64) float64 { return bb * y }
	i11 := (dw*dw - h) / 2
	yt := y + f(y)*h + g(y)*dw
	yhat := 2*y - y + f(y)*h + g(y)*dw
	for _, tc := range []struct {
		name, method string
		free         bool
		want         float64
	}{
		{"euler", EulerMaruyama, false, y + f(y)*h + g(y)*dw},
		{"milstein", Milstein, false, y + f(y)*h + g(y)*dw + bb*g(y)*i11},
		{"milstein derivative-free", Milstein, true, y + f(y)*h + g(y)*dw + (g(y+f(y)*h+g(y)*sq)-g(y))*i11/sq},
		{"srk", SRK, false, y + h/2*(f(y)+f(y+f(y)*h)) + g(y)*dw + (g(y+f(y)*h+g(y)*sq)-g(y+f(y)*h-g(y)*sq))*i11/(2*sq)},
		{"heun", Heun, false, y + h/2*(f(y)+f(yt)) + (g(y)+g(yt))*dw/2},
		{"reversible_heun", ReversibleHeun, false, y + h/2*(f(y)+f(yhat)) + (g(y)+g(yhat))*dw/2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp := autograd.NewTape(engine64())
			s := Funcs[float64]{
				F: func(tp *autograd.Tape[float64], _ float64, y autograd.Var[float64]) autograd.Var[float64] {
					return autograd.Scale(y, a)
				},
				G: func(tp *autograd.Tape[float64], _ float64, y autograd.Var[float64]) autograd.Var[float64] {
					return autograd.Scale(y, bb)
				},
			}
			ys, st, err := Solve[float64](tp, s, tp.Input(tensor.FromSlice([]float64{y})), []float64{0, h}, givenPath{dw}, Options{Method: tc.method, Step: h, DerivativeFree: tc.free})
			if err != nil {
				t.Fatal(err)
			}
			if got := ys[1].Item(); math.Abs(got-tc.want) > 1e-14 {
				t.Errorf("one step: %.17g, want %.17g", got, tc.want)
			}
			if st.Steps != 1 {
				t.Errorf("%d steps, want 1", st.Steps)
			}
		})
	}
}

// givenPath replays the same one-element increment for any interval.
type givenPath []float64

func (p givenPath) Increment(dst *tensor.Tensor[float64], s, t float64) error {
	copy(dst.Data(), p)
	return nil
}
func (p givenPath) Shape() []int { return []int{len(p)} }

// TestSolveErrors: bad options, noise layouts, shapes and NaNs are errors
// that name what is wrong and where.
func TestSolveErrors(t *testing.T) {
	good := gbmDiag.sde()
	nanAt := func(tNaN float64) SDE[float64] {
		return Funcs[float64]{F: good.Drift, G: func(tp *autograd.Tape[float64], t float64, y autograd.Var[float64]) autograd.Var[float64] {
			if t >= tNaN {
				return autograd.Scale(y, math.NaN())
			}
			return good.Diffusion(tp, t, y)
		}}
	}
	wrongG := Funcs[float64]{F: good.Drift, G: func(tp *autograd.Tape[float64], t float64, y autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Reshape(autograd.Concat(0, y, y), 2, 4)
	}}
	wrongF := Funcs[float64]{F: func(tp *autograd.Tape[float64], t float64, y autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Concat(0, y, y)
	}, G: good.Diffusion}
	ts := []float64{0, 0.5, 1}
	for _, tc := range []struct {
		name      string
		s         SDE[float64]
		yShape    []int
		pathShape []int
		ts        []float64
		opt       Options
		want      []string // substrings of the message
		is        error
	}{
		{"no step", good, []int{4}, []int{4}, ts, Options{}, []string{"Step"}, nil},
		{"unknown method", good, []int{4}, []int{4}, ts, Options{Method: "rk4", Step: 0.1}, []string{`"rk4"`}, nil},
		{"calculus", good, []int{4}, []int{4}, ts, Options{Method: Heun, Calculus: Ito, Step: 0.1}, []string{"Stratonovich", "Itô"}, nil},
		{"times", good, []int{4}, []int{4}, []float64{0, 0.5, 0.5}, Options{Step: 0.1}, []string{"ts[2]"}, nil},
		{"diagonal path", good, []int{4}, []int{3}, ts, Options{Step: 0.1}, []string{"diagonal", "[4]", "[3]"}, nil},
		{"scalar path", good, []int{4}, []int{3}, ts, Options{Step: 0.1, Noise: Scalar}, []string{"scalar", "[4]", "[3]"}, nil},
		{"general path", good, []int{4, 2}, []int{3}, ts, Options{Step: 0.1, Noise: General}, []string{"general", "[4 2]", "[3]"}, nil},
		{"milstein general", good, []int{4, 2}, []int{4, 2}, ts, Options{Method: Milstein, Step: 0.1, Noise: General}, []string{"general"}, nil},
		{"sri2 without areas", good, []int{1}, []int{1}, ts, Options{Method: SRI2, Step: 0.1}, []string{"sri2", "Lévy", "givenPath"}, nil},
		{"sra1 without areas", good, []int{1}, []int{1}, ts, Options{Method: SRA1, Step: 0.1}, []string{"sra1", "Lévy", "givenPath"}, nil},
		{"adjoint of an Itô method", good, []int{4}, []int{4}, ts, Options{Method: SRK, Step: 0.1, Mode: Adjoint{}}, []string{"Adjoint", "Stratonovich", "srk"}, nil},
		{"checkpointed reversible heun", good, []int{4}, []int{4}, ts, Options{Method: ReversibleHeun, Step: 0.1, Mode: Checkpoint{}}, []string{"Checkpoint", "Reversible"}, nil},
		{"recursive reversible heun", good, []int{4}, []int{4}, ts, Options{Method: ReversibleHeun, Step: 0.1, Mode: Recursive{Budget: 4}}, []string{"Recursive", "Reversible"}, nil},
		{"negative every", good, []int{4}, []int{4}, ts, Options{Step: 0.1, Mode: Checkpoint{Every: -2}}, []string{"Checkpoint.Every -2"}, nil},
		{"negative budget", good, []int{4}, []int{4}, ts, Options{Step: 0.1, Mode: Recursive{Budget: -1}}, []string{"Recursive.Budget -1"}, nil},
		{"pointer mode", good, []int{4}, []int{4}, ts, Options{Step: 0.1, Mode: &Checkpoint{}}, []string{"*sde.Checkpoint", "not a pointer"}, nil},
		{"reversible gradient", good, []int{4}, []int{4}, ts, Options{Method: Heun, Step: 0.1, Mode: Reversible{}}, []string{"reversible_heun"}, nil},
		{"diffusion shape", wrongG, []int{4}, []int{4}, ts, Options{Step: 0.1}, []string{"diffusion", "[2 4]", "want [4]", "t=0"}, nil},
		{"drift shape", wrongF, []int{4}, []int{4}, ts, Options{Step: 0.1}, []string{"drift", "[8]", "[4]"}, nil},
		{"NaN diffusion", nanAt(0.6), []int{4}, []int{4}, ts, Options{Method: Heun, Step: 0.25}, []string{"heun", "t=0.5", "diffusion", "NaN"}, ErrNonFinite},
		{"outside the path", good, []int{4}, []int{4}, []float64{0, 1.5}, Options{Step: 0.5}, []string{"t=1", "span"}, ErrOutsideSpan},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var path Path[float64] = mustBrownian[float64](t, 0, 1, tc.pathShape, BrownianOptions{Seed: 1})
			if tc.opt.Method == SRI2 || tc.opt.Method == SRA1 {
				path = givenPath{0.1}
			}
			tp := autograd.NewTape(engine64())
			_, _, err := Solve[float64](tp, tc.s, tp.Const(tensor.Full(1.0, tc.yShape...)), tc.ts, path, tc.opt)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
		})
	}
}

// TestOutputTimes: output times split the steps (equal steps no longer
// than Step between them), and a solve to t through an intermediate output
// time equals the solve to t alone where the steps coincide.
func TestOutputTimes(t *testing.T) {
	g := gbmDiag
	b := mustBrownian[float64](t, 0, 1, []int{5}, BrownianOptions{Seed: 3})
	tp := autograd.NewTape(engine64())
	tp.SetNoGrad(true)
	y0 := tp.Const(tensor.Full(1.0, 5))
	all, st, err := Solve[float64](tp, g.sde(), y0, []float64{0, 0.25, 0.5, 1}, b, Options{Method: SRK, Step: 0.125})
	if err != nil {
		t.Fatal(err)
	}
	if st.Steps != 8 || len(all) != 4 {
		t.Fatalf("%d steps and %d outputs, want 8 and 4", st.Steps, len(all))
	}
	end, _, err := Solve[float64](tp, g.sde(), y0, []float64{0, 1}, b, Options{Method: SRK, Step: 0.125})
	if err != nil {
		t.Fatal(err)
	}
	if a, e := all[3].Value().ReadData(), end[1].Value().ReadData(); !sameFloats(a, e) {
		t.Errorf("y(1) through outputs %v, directly %v", a, e)
	}
	_, st, err = Solve[float64](tp, g.sde(), y0, []float64{0, 0.3, 1}, b, Options{Step: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	if st.Steps != 2+3 {
		t.Errorf("[0, 0.3] and [0.3, 1] with steps ≤ 0.25: %d steps, want 5", st.Steps)
	}
}

// TestSingleTime: a solve with one output time returns y0 itself in every
// gradient mode, with no step taken.
func TestSingleTime(t *testing.T) {
	b := mustBrownian[float64](t, 0, 1, []int{4}, BrownianOptions{Seed: 3})
	for _, g := range []GradMode{Backprop{}, Reversible{}, Adjoint{}, Checkpoint{}, Recursive{}} {
		method := ReversibleHeun
		if g == (Checkpoint{}) || g == (Recursive{}) {
			method = Heun
		}
		tp := autograd.NewTape(engine64())
		y0 := tp.Input(tensor.Full(1.0, 4))
		ys, st, err := Solve[float64](tp, gbmDiag.sde(), y0, []float64{0.5}, b, Options{Method: method, Step: 0.1, Mode: g})
		if err != nil {
			t.Fatal(err)
		}
		if len(ys) != 1 || ys[0] != y0 || st.Steps != 0 {
			t.Errorf("gradient %v: %d outputs after %d steps, want y0 alone", g, len(ys), st.Steps)
		}
	}
}

func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFirstNonFinite: the index of the first NaN or infinity, wherever it
// is (in the four-at-a-time part or the tail), and −1 for finite values,
// the largest included.
func TestFirstNonFinite(t *testing.T) {
	for n := range 11 {
		for at := -1; at < n; at++ {
			for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
				x := make([]float64, n)
				for i := range x {
					x[i] = math.MaxFloat64 * float64(1-2*(i%2))
				}
				want := -1
				if at >= 0 {
					x[at], want = bad, at
				}
				if got := firstNonFinite(x); got != want {
					t.Errorf("n %d, %v at %d: got %d, want %d", n, bad, at, got, want)
				}
				x32 := make([]float32, n)
				for i, v := range x {
					x32[i] = float32(v)
					if !math.IsNaN(v) && !math.IsInf(v, 0) {
						x32[i] = math.MaxFloat32
					}
				}
				if got := firstNonFinite(x32); got != want {
					t.Errorf("float32, n %d, %v at %d: got %d, want %d", n, bad, at, got, want)
				}
			}
		}
	}
}

// additiveSDE is dY = (sin Y − Y) dt + ½(1 + t) dW on a batch of n paths
// (diagonal noise that does not depend on Y), or with general noise
// dY = (sin Y − Y) dt + (1 + t) S dW, S a fixed 2 × 2 matrix per row of
// [n, 2].
func additiveSDE(general bool, n int) SDE[float64] {
	return Funcs[float64]{
		F: func(tp *autograd.Tape[float64], t float64, y autograd.Var[float64]) autograd.Var[float64] {
			return autograd.Sub(autograd.Sin(y), y)
		},
		G: func(tp *autograd.Tape[float64], t float64, y autograd.Var[float64]) autograd.Var[float64] {
			if !general {
				return tp.Const(tensor.Full(0.5*(1+t), n))
			}
			s := make([]float64, 0, 4*n)
			for range n {
				s = append(s, 0.6*(1+t), 0.3*(1+t), -0.4*(1+t), 0.5*(1+t))
			}
			return tp.Const(tensor.FromSlice(s, n, 2, 2))
		},
	}
}

// TestSRA1StrongOrder: sra1's strong order on an SDE with additive noise
// and a nonlinear drift (additiveSDE, 500 paths), against sri2 at a step
// of 1/4096 on the same path (diagonal) or sra1 itself at 1/4096 (general
// noise, which sri2 does not take): fitted order in [1.35, 1.85] over
// steps 1/8 to 1/128 (measured 1.65 and 1.66: the drift's h² terms still
// weigh at these steps); Euler–Maruyama's, 1 for additive noise, for
// contrast.
func TestSRA1StrongOrder(t *testing.T) {
	const n = 500
	hs := []float64{1.0 / 8, 1.0 / 16, 1.0 / 32, 1.0 / 64, 1.0 / 128}
	for _, tc := range []struct {
		method  string
		general bool
		lo, hi  float64
	}{
		{SRA1, false, 1.35, 1.85},
		{SRA1, true, 1.35, 1.85},
		{EulerMaruyama, false, 0.85, 1.15},
	} {
		t.Run(fmt.Sprintf("%s/general %v", tc.method, tc.general), func(t *testing.T) {
			yShape, wShape, noise, ref := []int{n}, []int{n}, Diagonal, SRI2
			if tc.general {
				yShape, wShape, noise, ref = []int{n, 2}, []int{n, 2}, General, SRA1
			}
			s := additiveSDE(tc.general, n)
			b := mustBrownian[float64](t, 0, 1, wShape, BrownianOptions{Seed: 7})
			solve := func(method string, h float64) []float64 {
				tp := autograd.NewTape(engine64())
				tp.SetNoGrad(true)
				defer tp.Release()
				ys, _, err := Solve[float64](tp, s, tp.Const(tensor.Full(0.5, yShape...)), []float64{0, 1}, b, Options{Method: method, Noise: noise, Step: h})
				if err != nil {
					t.Fatal(err)
				}
				return ys[1].Value().ReadData()
			}
			exact := solve(ref, 1.0/4096)
			errs := make([]float64, len(hs))
			for i, h := range hs {
				for j, v := range solve(tc.method, h) {
					errs[i] += math.Abs(v-exact[j]) / float64(len(exact))
				}
			}
			p := slope(hs, errs)
			t.Logf("errors %.3g, fitted strong order %.3f", errs, p)
			if p < tc.lo || p > tc.hi {
				t.Errorf("fitted strong order %.3f, want in [%g, %g]", p, tc.lo, tc.hi)
			}
		})
	}
}

// TestSolveTinyFixedStep: a fixed Step so small that the step count would
// overflow an int (it used to come out as one step over the whole span,
// with no error), or that cuts an interval into steps shorter than float64
// resolves at its times, is an error wrapping ErrStepUnderflow that names
// the Step and the span, before any step is taken, in every gradient mode;
// MaxSteps, when set, bounds a fixed-step solve's steps (ErrMaxSteps).
func TestSolveTinyFixedStep(t *testing.T) {
	for _, tc := range []struct {
		name string
		ts   []float64
		opt  Options
		want []string
		is   error
	}{
		{"1e-300", []float64{0, 1}, Options{Step: 1e-300}, []string{"Step 1e-300", "span [0, 1]", "ts[0] to ts[1]"}, ErrStepUnderflow},
		{"past int64", []float64{0, 1}, Options{Step: 1e-20}, []string{"Step 1e-20", "span [0, 1]"}, ErrStepUnderflow},
		{"denormal", []float64{0, 1}, Options{Step: 5e-324}, []string{"Step 5e-324", "span [0, 1]"}, ErrStepUnderflow},
		{"second interval", []float64{0, 1e-300, 1}, Options{Step: 1e-300}, []string{"span [1e-300, 1]", "ts[1] to ts[2]"}, ErrStepUnderflow},
		{"late times", []float64{1e15, 1e15 + 1}, Options{Step: 0.01}, []string{"Step 0.01", "span [1e+15, 1.000000000000001e+15]", "100 steps"}, ErrStepUnderflow},
		{"reversible", []float64{0, 1}, Options{Method: ReversibleHeun, Step: 1e-300, Mode: Reversible{}}, []string{"Step 1e-300"}, ErrStepUnderflow},
		{"checkpoint", []float64{0, 1}, Options{Method: Heun, Step: 1e-300, Mode: Checkpoint{}}, []string{"Step 1e-300"}, ErrStepUnderflow},
		{"adjoint", []float64{0, 1}, Options{Method: Heun, Step: 1e-300, Mode: Adjoint{}}, []string{"Step 1e-300"}, ErrStepUnderflow},
		{"max steps", []float64{0, 0.5, 1}, Options{Step: 1e-3, MaxSteps: 999}, []string{"Step 0.001", "1000 steps", "span [0, 1]", "MaxSteps 999"}, ErrMaxSteps},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := mustBrownian[float64](t, tc.ts[0], tc.ts[len(tc.ts)-1], []int{4}, BrownianOptions{Seed: 48})
			tp := autograd.NewTape(engine64())
			_, st, err := Solve[float64](tp, gbmDiag.sde(), tp.Input(tensor.Full(1.0, 4)), tc.ts, b, tc.opt)
			if err == nil {
				t.Fatalf("no error; %d steps", st.Steps)
			}
			if !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if d := cmp.Diff(Stats{}, *st); d != "" {
				t.Errorf("work done before the error (-want +got):\n%s", d)
			}
		})
	}
	// The smallest steps that float64 tells apart are still taken, and
	// MaxSteps at the count is no error.
	b := mustBrownian[float64](t, 0, 1, []int{4}, BrownianOptions{Seed: 48})
	tp := autograd.NewTape(engine64())
	tp.SetNoGrad(true)
	_, st, err := Solve[float64](tp, gbmDiag.sde(), tp.Const(tensor.Full(1.0, 4)), []float64{0, 1e-300}, b, Options{Step: 1e-302})
	if err != nil || st.Steps != 100 {
		t.Errorf("[0, 1e-300] in steps of 1e-302: %d steps, error %v; want 100 steps", st.Steps, err)
	}
	if _, st, err = Solve[float64](tp, gbmDiag.sde(), tp.Const(tensor.Full(1.0, 4)), []float64{0, 0.5, 1}, b, Options{Step: 1e-3, MaxSteps: 1000}); err != nil || st.Steps != 1000 {
		t.Errorf("1000 steps with MaxSteps 1000: %d steps, error %v", st.Steps, err)
	}
}

// TestSolveInfiniteTime: an infinite or NaN output time is an error naming
// its index and value before anything is solved (ts = [0, +Inf] used to
// fail in the first step as "t=NaN … W(NaN, NaN) outside the Brownian
// path's span"), for fixed and adaptive steps and for a Block's Times.
func TestSolveInfiniteTime(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		name string
		ts   []float64
		opt  Options
		want string
	}{
		{"+Inf", []float64{0, inf}, Options{Step: 0.1}, "ts[1] = +Inf is not finite"},
		{"-Inf first", []float64{-inf, 1}, Options{Step: 0.1}, "ts[0] = -Inf is not finite"},
		{"-Inf after", []float64{0, -inf}, Options{Step: 0.1}, "ts[1] = -Inf is not finite"},
		{"NaN", []float64{0, math.NaN()}, Options{Step: 0.1}, "ts[1] = NaN is not finite"},
		{"last of three", []float64{0, 0.5, inf}, Options{Step: 0.1}, "ts[2] = +Inf is not finite"},
		{"adaptive", []float64{0, inf}, Options{Step: 0.1, Adaptive: true}, "ts[1] = +Inf is not finite"},
		{"reversible", []float64{0, inf}, Options{Method: ReversibleHeun, Step: 0.1, Mode: Reversible{}}, "ts[1] = +Inf is not finite"},
		{"single", []float64{inf}, Options{Step: 0.1}, "ts[0] = +Inf is not finite"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := mustBrownian[float64](t, 0, 1, []int{4}, BrownianOptions{Seed: 48})
			tp := autograd.NewTape(engine64())
			_, st, err := Solve[float64](tp, gbmDiag.sde(), tp.Input(tensor.Full(1.0, 4)), tc.ts, b, tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			if errors.Is(err, ErrOutsideSpan) {
				t.Errorf("error %q blames the Brownian path, not the output time", err)
			}
			if d := cmp.Diff(Stats{}, *st); d != "" {
				t.Errorf("work done before the error (-want +got):\n%s", d)
			}
		})
	}
	blk := &Block[float64]{SDE: gbmDiag.sde(), Times: []float64{0, inf}, Options: Options{Step: 0.1}}
	tp := autograd.NewTape(engine64())
	if _, err := blk.Forward(tp, tp.Input(tensor.Full(1.0, 4))); err == nil || !strings.Contains(err.Error(), "Block.Times[1] = +Inf is not finite") {
		t.Errorf("Block with Times [0, +Inf]: error %v, want one naming Block.Times[1]", err)
	}
}

// TestReversibleHeunDissipative documents reversible Heun's instability on
// a drift that contracts (ReversibleHeun's doc). On dy = −y dt its error
// grows e-fold per unit of time, alternating in sign from step to step, at
// h = 0.1 and 0.01 alike (e(15)/e(10) = e(20)/e(15) = e⁵ ± 5%), while
// Heun's decays with y (below 5% of e^{−t} to t = 20). On the dissipative f = −½y³ − 0.1y with
// additive noise 0.5 dW from y0 = 2 (h = 0.01), reversible Heun overflows
// (here at t = 4.69) with or without the Reversible gradient, and says so: a
// *SolveError naming the method and the time of the step, wrapping
// ErrNonFinite, that points at the instability; Heun solves the same path
// to t = 10.
func TestReversibleHeunDissipative(t *testing.T) {
	decay := Funcs[float64]{
		F: func(_ *autograd.Tape[float64], _ float64, y autograd.Var[float64]) autograd.Var[float64] {
			return autograd.Scale(y, -1)
		},
		G: func(_ *autograd.Tape[float64], _ float64, y autograd.Var[float64]) autograd.Var[float64] {
			return autograd.Scale(y, 0)
		},
	}
	growth, want := map[string]float64{}, map[string]float64{}
	for _, h := range []float64{0.1, 0.01} {
		b := mustBrownian[float64](t, 0, 20, []int{1}, BrownianOptions{Seed: 48})
		ts := []float64{0, 10, 15, 15 + h, 20}
		for _, method := range []string{ReversibleHeun, Heun} {
			tp := autograd.NewTape(engine64())
			tp.SetNoGrad(true)
			ys, _, err := Solve[float64](tp, decay, tp.Const(tensor.Full(1.0, 1)), ts, b, Options{Method: method, Step: h})
			if err != nil {
				t.Fatalf("%s, h = %g: %v", method, h, err)
			}
			e := make([]float64, len(ts))
			for k, y := range ys {
				e[k] = y.Value().ReadData()[0] - math.Exp(-ts[k])
			}
			if method == Heun {
				for k := 1; k < len(e); k++ {
					if r := math.Abs(e[k]) / math.Exp(-ts[k]); r > 0.05 {
						t.Errorf("heun, h = %g: relative error %.3g at t = %g, want below 5%%", h, r, ts[k])
					}
				}
				continue
			}
			growth[fmt.Sprintf("h=%g e(15)/e(10)", h)] = e[2] / e[1]
			growth[fmt.Sprintf("h=%g e(20)/e(15)", h)] = e[4] / e[2]
			want[fmt.Sprintf("h=%g e(15)/e(10)", h)] = math.Exp(5)
			want[fmt.Sprintf("h=%g e(20)/e(15)", h)] = math.Exp(5)
			if !(e[2]*e[3] < 0) {
				t.Errorf("reversible_heun, h = %g: errors %.3g at t = 15 and %.3g a step later, want opposite signs", h, e[2], e[3])
			}
		}
	}
	if d := cmp.Diff(want, growth, cmpopts.EquateApprox(0.05, 0)); d != "" {
		t.Errorf("reversible_heun's error growth on dy = −y dt (-want +got):\n%s", d)
	}

	cubic := Funcs[float64]{
		F: func(_ *autograd.Tape[float64], _ float64, y autograd.Var[float64]) autograd.Var[float64] {
			return autograd.Sub(autograd.Scale(autograd.Mul(y, autograd.Mul(y, y)), -0.5), autograd.Scale(y, 0.1))
		},
		G: func(tp *autograd.Tape[float64], _ float64, y autograd.Var[float64]) autograd.Var[float64] {
			return tp.Const(tensor.Full(0.5, y.Shape()...))
		},
	}
	ts := []float64{0, 2, 4, 6, 8, 10}
	b := mustBrownian[float64](t, 0, 10, []int{4}, BrownianOptions{Seed: 48})
	for _, g := range []GradMode{Backprop{}, Reversible{}} {
		tp := autograd.NewTape(engine64())
		tp.SetNoGrad(g == (Backprop{}))
		_, _, err := Solve[float64](tp, cubic, tp.Input(tensor.Full(2.0, 4)), ts, b, Options{Method: ReversibleHeun, Step: 0.01, Mode: g})
		var se *SolveError
		if !errors.As(err, &se) || !errors.Is(err, ErrNonFinite) || se.Method != ReversibleHeun || !(se.T > 2 && se.T < 10) {
			t.Fatalf("gradient %v: error %v, want a *SolveError of reversible_heun at some 2 < t < 10 wrapping ErrNonFinite", g, err)
		}
		for _, w := range []string{fmt.Sprintf("at t=%g", se.T), "not A-stable", "heun is stable"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("gradient %v: error %q does not say %q", g, err, w)
			}
		}
	}
	tp := autograd.NewTape(engine64())
	tp.SetNoGrad(true)
	ys, _, err := Solve[float64](tp, cubic, tp.Const(tensor.Full(2.0, 4)), ts, b, Options{Method: Heun, Step: 0.01})
	if err != nil {
		t.Fatalf("heun: %v", err)
	}
	for _, v := range ys[len(ys)-1].Value().ReadData() {
		if !(math.Abs(v) < 5) {
			t.Errorf("heun: y(10) = %v, want bounded", ys[len(ys)-1].Value().ReadData())
		}
	}
}
