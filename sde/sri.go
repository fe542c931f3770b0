package sde

import (
	"errors"
	"math"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// sriTableau is a stochastic Runge–Kutta method of Rößler's (2010, "Runge–
// Kutta methods for the strong approximation of solutions of stochastic
// differential equations", SIAM J. Numer. Anal. 48) SRI family for Itô SDEs
// with scalar or diagonal noise. With the iterated integrals I₁ = ΔW,
// I₁₁ = (ΔW² − h)/2, I₁₁₁ = (ΔW³ − 3hΔW)/6 and I₁₀ = ∫∫dW ds = h(H + ΔW/2)
// (H the space-time Lévy area), per Brownian motion, the stages are
//
//	H⁰ᵢ = y + Σⱼ A⁰ᵢⱼ f(t + c⁰ⱼh, H⁰ⱼ) h + Σⱼ B⁰ᵢⱼ g(t + c¹ⱼh, H¹ⱼ) I₁₀/h
//	H¹ᵢ = y + Σⱼ A¹ᵢⱼ f(t + c⁰ⱼh, H⁰ⱼ) h + Σⱼ B¹ᵢⱼ g(t + c¹ⱼh, H¹ⱼ) √h
//
// and the step
//
//	y₁ = y + Σᵢ αᵢ f(t + c⁰ᵢh, H⁰ᵢ) h
//	       + Σᵢ (β¹ᵢ I₁ + β²ᵢ I₁₁/√h + β³ᵢ I₁₀/h + β⁴ᵢ I₁₁₁/h) g(t + c¹ᵢh, H¹ᵢ).
type sriTableau struct {
	c0, c1                    []float64
	a0, a1, b0, b1            [][]float64 // strictly lower triangular, row i has i entries
	alpha, b1w, b2w, b3w, b4w []float64
}

// sri2 is Rößler's SRI2 (deterministic order 3, strong order 1.5), the
// tableau torchsde's srk uses for diagonal noise.
var sri2 = sriTableau{
	c0: []float64{0, 1, 1.0 / 2, 0},
	c1: []float64{0, 1.0 / 4, 1, 1.0 / 4},
	a0: [][]float64{{}, {1}, {1.0 / 4, 1.0 / 4}, {0, 0, 0}},
	a1: [][]float64{{}, {1.0 / 4}, {1, 0}, {0, 0, 1.0 / 4}},
	b0: [][]float64{{}, {0}, {1, 1.0 / 2}, {0, 0, 0}},
	b1: [][]float64{{}, {-1.0 / 2}, {1, 0}, {2, -1, 1.0 / 2}},

	alpha: []float64{1.0 / 6, 1.0 / 6, 2.0 / 3, 0},
	b1w:   []float64{-1, 4.0 / 3, 2.0 / 3, 0},
	b2w:   []float64{1, -4.0 / 3, 1.0 / 3, 0},
	b3w:   []float64{2, -4.0 / 3, -2.0 / 3, 0},
	b4w:   []float64{-2, 5.0 / 3, -2.0 / 3, 1},
}

// sri runs an SRI tableau.
type sri[T tensor.Float] struct {
	stateless[T]
	p  *problem[T]
	tb *sriTableau
}

func (s *sri[T]) start(*autograd.Tape[T], float64, autograd.Var[T]) error { return nil }

func (s *sri[T]) step(tp *autograd.Tape[T], t, h float64, y, dW autograd.Var[T]) (autograd.Var[T], error) {
	return y, errors.New("the SRI method needs the Lévy area (stepArea)")
}

// areaStepper is a method that reads the space-time Lévy area as well as
// ΔW (both shaped as the problem's wShape); the loop calls stepArea
// instead of step.
type areaStepper[T tensor.Float] interface {
	stepArea(tp *autograd.Tape[T], t, h float64, y autograd.Var[T], dW, dH *tensor.Tensor[T]) (autograd.Var[T], error)
}

// needed reports whether stage i's f (drift) or g is read by a later stage
// or by the step.
func (tb *sriTableau) needed(i int, drift bool) bool {
	if drift && tb.alpha[i] != 0 || !drift && (tb.b1w[i] != 0 || tb.b2w[i] != 0 || tb.b3w[i] != 0 || tb.b4w[i] != 0) {
		return true
	}
	for k := i + 1; k < len(tb.c0); k++ {
		if drift && (tb.a0[k][i] != 0 || tb.a1[k][i] != 0) || !drift && (tb.b0[k][i] != 0 || tb.b1[k][i] != 0) {
			return true
		}
	}
	return false
}

func (s *sri[T]) stepArea(tp *autograd.Tape[T], t, h float64, y autograd.Var[T], dW, dH *tensor.Tensor[T]) (autograd.Var[T], error) {
	p, tb := s.p, s.tb
	stages := len(tb.c0)
	sq := math.Sqrt(h)
	w, a := dW.ReadData(), dH.ReadData()
	shape := dW.Shape()
	// I₁₀/h, and the step's weight of each stage's g.
	i10h := tensor.New[T](shape...)
	weights := make([]*tensor.Tensor[T], stages)
	for i := range weights {
		weights[i] = tensor.New[T](shape...)
	}
	for k := range w {
		dw, hh := float64(w[k]), float64(a[k])
		i10 := h * (hh + dw/2)
		i11 := (dw*dw - h) / 2
		i111 := (dw*dw*dw - 3*h*dw) / 6
		i10h.Data()[k] = T(i10 / h)
		for i := range stages {
			weights[i].Data()[k] = T(tb.b1w[i]*dw + tb.b2w[i]*i11/sq + tb.b3w[i]*i10/h + tb.b4w[i]*i111/h)
		}
	}
	i10v := tp.Const(i10h)
	fs := make([]autograd.Var[T], stages)
	gs := make([]autograd.Var[T], stages)
	for i := range stages {
		c0 := []T{1}
		x0 := []autograd.Var[T]{y}
		c1 := []T{1}
		x1 := []autograd.Var[T]{y}
		for j := range i {
			if v := tb.a0[i][j]; v != 0 {
				c0, x0 = append(c0, T(v*h)), append(x0, fs[j])
			}
			if v := tb.b0[i][j]; v != 0 {
				c0, x0 = append(c0, T(v)), append(x0, p.apply(gs[j], i10v))
			}
			if v := tb.a1[i][j]; v != 0 {
				c1, x1 = append(c1, T(v*h)), append(x1, fs[j])
			}
			if v := tb.b1[i][j]; v != 0 {
				c1, x1 = append(c1, T(v*sq)), append(x1, gs[j])
			}
		}
		var err error
		if tb.needed(i, true) {
			if fs[i], err = p.drift(tp, t+tb.c0[i]*h, combine(c0, x0)); err != nil {
				return y, err
			}
		}
		if tb.needed(i, false) {
			if gs[i], err = p.diffusion(tp, t+tb.c1[i]*h, combine(c1, x1)); err != nil {
				return y, err
			}
		}
	}
	coef := []T{1}
	terms := []autograd.Var[T]{y}
	for i := range stages {
		if tb.alpha[i] != 0 {
			coef, terms = append(coef, T(tb.alpha[i]*h)), append(terms, fs[i])
		}
		if !gs[i].IsZero() {
			coef, terms = append(coef, 1), append(terms, p.apply(gs[i], tp.Const(weights[i])))
		}
	}
	return autograd.LinComb(coef, terms...), nil
}

// combine is Σ cᵢxᵢ, or x₀ itself for the single term 1·x₀.
func combine[T tensor.Float](c []T, x []autograd.Var[T]) autograd.Var[T] {
	if len(x) == 1 && c[0] == 1 {
		return x[0]
	}
	return autograd.LinComb(c, x...)
}

// sra1 is Rößler's SRA1 for additive noise (see SRA1).
type sra1[T tensor.Float] struct {
	stateless[T]
	p *problem[T]
}

func (s *sra1[T]) start(*autograd.Tape[T], float64, autograd.Var[T]) error { return nil }

func (s *sra1[T]) step(tp *autograd.Tape[T], t, h float64, y, dW autograd.Var[T]) (autograd.Var[T], error) {
	return y, errors.New("the SRA method needs the Lévy area (stepArea)")
}

func (s *sra1[T]) stepArea(tp *autograd.Tape[T], t, h float64, y autograd.Var[T], dW, dH *tensor.Tensor[T]) (autograd.Var[T], error) {
	p := s.p
	w, a := dW.ReadData(), dH.ReadData()
	i10h := tensor.New[T](dW.Shape()...) // I₁₀/h = H + ΔW/2
	rest := tensor.New[T](dW.Shape()...) // ΔW − I₁₀/h
	for k := range w {
		v := float64(a[k]) + float64(w[k])/2
		i10h.Data()[k] = T(v)
		rest.Data()[k] = T(float64(w[k]) - v)
	}
	f1, g0, err := p.fields(tp, t, y)
	if err != nil {
		return y, err
	}
	g1, err := p.diffusion(tp, t+h, y)
	if err != nil {
		return y, err
	}
	i10 := tp.Const(i10h)
	h2 := autograd.LinComb([]T{1, T(0.75 * h), 1.5}, y, f1, p.apply(g1, i10))
	f2, err := p.drift(tp, t+0.75*h, h2)
	if err != nil {
		return y, err
	}
	return autograd.LinComb([]T{1, T(h / 3), T(2 * h / 3), 1, 1},
		y, f1, f2, p.apply(g1, tp.Const(rest)), p.apply(g0, i10)), nil
}
