package integrate

import (
	"fmt"
	"math"
	"math/big"

	"github.com/adamnode/adamnode/tensor"
)

// The Adams methods of torchdiffeq's fixed_adams.py, with a fixed Step:
// the first two steps are Kutta's 3/8 rule (rk38); then
// Adams–Bashforth of order k = min(steps so far, MaxOrder − 1) (3 at the
// third step),
//
//	y_{n+1} = y_n + h·Σ_{j<k} β_j·f_{n−j},
//
// and, for implicit_adams (and fixed_adams, its other name), the
// Adams–Moulton corrector of order k + 1, iterated (at most four times)
// until its change is a thousandth of the tolerance (the solve's RTol and
// ATol, largest element) — within the tolerance after four, or an error:
//
//	y_{n+1} = y_n + h·μ_0·f(t_{n+1}, y_{n+1}) + h·Σ_{j≥1} μ_j·f_{n+1−j}.
//
// As torchdiffeq's, the order grows with the history up to
// Options.MaxOrder (default 12, as its max_order: the predictor then uses
// eleven past values); MaxOrder 5 gives methods of a definite order (4
// explicit, 5 with the corrector), the orders the tableaus state. The
// coefficients are computed exactly (rationals) from the recurrences of
// the Adams methods' generating functions.
//
// A higher MaxOrder buys no accuracy: the third step, of order 3 (its
// local error O(h⁴)), bounds the global error to O(h⁴) for explicit_adams
// whatever MaxOrder ≥ 5 is (O(h³) at MaxOrder 4), and the start-up to
// O(h⁵) for the others. And it costs stability, explicit_adams's above
// all: Adams–Bashforth of order k is stable on y' = λy (λ < 0) only for
// h·|λ| up to 0.545, 0.3, 0.163, 0.0877, 0.0465, 0.0244, 0.0127, 0.00657
// and 0.00338 for k = 3, …, 11 (MaxOrder 4, …, 12), the interval about
// halving with each order. At the default MaxOrder 12 a longer step
// diverges once the history is full, the faster the more steps follow, so
// that on y' = −y over [0, 1] the error grows as the step shrinks — 2.5e-4
// at Step 0.1, 2.3e-3 at 0.05, 0.049 at 0.025, 0.46 at 0.0125, 5e-3 at
// 0.00625 — until the step is inside the interval (1.3e-11 at 0.003125);
// over [0, 10], Step 0.2 ends at 1e18. torchdiffeq's explicit_adams, the
// same method with the same default, gives the same values: it is the
// method, not this code (at MaxOrder 4 and 5 the error falls as h³ and h⁴,
// odeblock's TestHole48ExplicitAdamsSmallSteps). With explicit_adams use
// MaxOrder 5: order 4, stable to h·|λ| ≤ 0.3, and on y' = −y over [0, 1]
// the smallest error of MaxOrder 4, 5, 6, 8, 10 and 12 at every Step from
// 0.2 to 0.001.
var (
	explicitAdams = adamsTableau("explicit_adams", false)
	implicitAdams = adamsTableau("implicit_adams", true)
	fixedAdams    = adamsTableau("fixed_adams", true)
)

// adamsMaxOrder is MaxOrder's largest value and default (torchdiffeq's).
const adamsMaxOrder = 12

// adamsTableau is rk38's tableau (the start-up steps) marked as Adams.
func adamsTableau(name string, implicit bool) *Tableau {
	tb := *rk38
	tb.Name, tb.family = name, adamsFamily{implicit: implicit}
	if implicit {
		tb.Order = 5 // the Adams–Moulton corrector of order 5 after Adams–Bashforth 4
	}
	return &tb
}

// Adams–Bashforth β (newest first) and Adams–Moulton μ (μ_0 for
// f_{n+1}, then newest first), by their number of coefficients:
// bashforth[k] is of order k, moulton[k] of order k.
var bashforth, moulton = adamsCoefficients(adamsMaxOrder)

// adamsCoefficients returns the Adams–Bashforth and Adams–Moulton
// coefficients up to order m. With γ_i (explicit) and γ*_i (implicit) the
// coefficients of the backward-difference forms, from
//
//	Σ_{j=0}^{i} γ_j/(i + 1 − j) = 1,  Σ_{j=0}^{i} γ*_j/(i + 1 − j) = 0 (i ≥ 1), γ_0 = γ*_0 = 1,
//
// expanding ∇^i f = Σ_j (−1)^j·C(i, j)·f_{−j} gives
// β_j = (−1)^j Σ_{i=j}^{k−1} C(i, j)·γ_i and μ_j = (−1)^j Σ_{i=j}^{k−1} C(i, j)·γ*_i.
func adamsCoefficients(m int) (ab, am [][]float64) {
	gamma := make([]*big.Rat, m)
	gammaStar := make([]*big.Rat, m)
	for i := range m {
		g, gs := big.NewRat(1, 1), new(big.Rat)
		if i == 0 {
			gs.SetInt64(1)
		}
		for j := range i {
			w := big.NewRat(1, int64(i+1-j))
			g.Sub(g, new(big.Rat).Mul(gamma[j], w))
			gs.Sub(gs, new(big.Rat).Mul(gammaStar[j], w))
		}
		gamma[i], gammaStar[i] = g, gs
	}
	expand := func(gs []*big.Rat, k int) []float64 {
		out := make([]float64, k)
		for j := range k {
			sum := new(big.Rat)
			for i := j; i < k; i++ {
				c := new(big.Rat).SetInt(new(big.Int).Binomial(int64(i), int64(j)))
				sum.Add(sum, c.Mul(c, gs[i]))
			}
			if j%2 == 1 {
				sum.Neg(sum)
			}
			out[j], _ = sum.Float64()
		}
		return out
	}
	ab, am = make([][]float64, m+1), make([][]float64, m+1)
	for k := 1; k <= m; k++ {
		ab[k], am[k] = expand(gamma, k), expand(gammaStar, k)
	}
	return ab, am
}

// adamsFamily is the family of the Adams methods: the tableau is the
// start-up method's (rk38), implicit adds the Adams–Moulton corrector.
type adamsFamily struct{ implicit bool }

// validate checks the start-up method's tableau.
func (adamsFamily) validate(tb *Tableau) error { return tb.validateExplicit() }
func (adamsFamily) stiff() bool                { return false }
func (f adamsFamily) method32() method[float32] {
	return &adams[float32]{implicit: f.implicit}
}
func (f adamsFamily) method64() method[float64] {
	return &adams[float64]{implicit: f.implicit}
}

// adams is an Adams method with a fixed step; its dense output is the
// start-up tableau's (explicitRK's).
type adams[T tensor.Float] struct {
	explicitRK[T]
	w        adamsWork[T]
	implicit bool
}

// begin forgets the history: the solve starts, or restarts after a jump
// (the history from before it belongs to other dynamics), with rk38.
func (m *adams[T]) begin(stepBufs[T], float64) { m.w.hist, m.w.at = m.w.hist[:0], m.w.at[:0] }

// adamsWork is the history of f at the past step starts, newest first,
// and the coefficients of the last uneven history.
type adamsWork[T any] struct {
	hist [][]T
	at   []float64 // their times
	beta []float64 // Adams–Bashforth coefficients for an uneven history
	mu   []float64 // Adams–Moulton coefficients for an uneven history
}

// step takes the step g: rk38 until three past f are known, then the
// Adams update (b.k[0] = f(t_n, y_n) is the newest).
func (m *adams[T]) step(b stepBufs[T], eval evalFunc[T], g stepGeom) error {
	w := &m.w
	maxHist := m.e.opts().MaxOrder - 1 // torchdiffeq's history length
	if maxHist < 0 {
		maxHist = adamsMaxOrder - 1
	}
	if len(w.at) == 0 || w.at[0] != g.t0 {
		// Push f_n (copied: b.k[0] is reused).
		var buf []T
		if len(w.hist) == maxHist {
			buf = w.hist[len(w.hist)-1]
			w.hist, w.at = w.hist[:len(w.hist)-1], w.at[:len(w.at)-1]
		} else {
			buf = make([]T, b.n)
		}
		copy(buf, b.k[0])
		w.hist = append([][]T{buf}, w.hist...)
		w.at = append([]float64{g.t0}, w.at...)
	}
	k := min(len(w.hist), maxHist)
	if k < 3 {
		return m.explicitRK.step(b, eval, g)
	}
	h := g.h
	beta, mu := w.coefficients(k, h, m.implicit)
	for i := range b.y1 {
		var d float64
		for j, b := range beta {
			d += b * float64(w.hist[j][i])
		}
		b.y1[i] = b.y0[i] + T(h*d)
	}
	if !m.implicit {
		return nil
	}
	// δ = h·Σ_{j≥1} μ_j·f_{n+1−j}; then y1 = y + h·μ_0·f(t1, y1) + δ.
	delta := b.tmp
	for i := range delta {
		var d float64
		for j, m := range mu[1:] {
			d += m * float64(w.hist[j][i])
		}
		delta[i] = T(h * d)
	}
	f := b.k[len(b.k)-1]
	tEnd := stageTime(g.t, g.h, g.end, 1, g.leftLimit) // before a jump at the end: its left limit
	var last float64
	for iter := 0; iter < 4; iter++ {
		if err := eval(evalStage, len(b.k)-1, tEnd, b.y1, f); err != nil {
			return err
		}
		var worst float64
		for i := range b.y1 {
			old := float64(b.y1[i])
			nw := float64(b.y0[i]) + h*mu[0]*float64(f[i]) + float64(delta[i])
			b.y1[i] = T(nw)
			sc := m.e.opts().ATol + m.e.opts().RTol*math.Max(math.Abs(old), math.Abs(nw))
			worst = math.Max(worst, math.Abs(nw-old)/sc)
		}
		// Converged well inside the tolerance: the corrector's own error
		// must not hide the method's.
		if worst < 1e-3 {
			return nil
		}
		last = worst
	}
	if last < 1 {
		return nil
	}
	return fmt.Errorf("%w: the Adams–Moulton corrector did not converge in 4 iterations at t=%g: take a smaller Step", ErrStepUnderflow, g.t)
}

// coefficients returns the Adams–Bashforth coefficients of order k (and,
// if implicit, the Adams–Moulton ones of order k + 1) for the step h from
// the newest time of the history: the fixed-step ones where the history's
// times are h apart, else the ones of the uneven history (variable-step
// Adams), β_j = (1/h)·∫ ℓ_j over the step, ℓ_j the Lagrange polynomial
// that is 1 at t_{n−j} and 0 at the other history times (for μ, at
// t_{n+1} and the history's first k times).
func (w *adamsWork[T]) coefficients(k int, h float64, implicit bool) (beta, mu []float64) {
	uniform := true
	for j := 1; j < k && uniform; j++ {
		x := (w.at[j] - w.at[0]) / h // −j on a uniform grid
		uniform = math.Abs(x+float64(j)) <= 1e-10*float64(j)
	}
	if uniform {
		if implicit {
			mu = moulton[k+1]
		}
		return bashforth[k], mu
	}
	var nodes [adamsMaxOrder + 1]float64
	for j := range k {
		nodes[j+1] = (w.at[j] - w.at[0]) / h
	}
	nodes[0] = 1 // t_{n+1}, for the corrector
	w.beta = lagrangeWeights(w.beta[:0], nodes[1:k+1])
	if implicit {
		w.mu = lagrangeWeights(w.mu[:0], nodes[:k+1])
	}
	return w.beta, w.mu
}

// lagrangeWeights appends to dst the integrals over [0, 1] of the Lagrange
// basis polynomials of the distinct nodes x (polynomials of degree
// len(x) − 1 ≤ 12), by Gauss–Legendre quadrature exact to degree 15.
func lagrangeWeights(dst, x []float64) []float64 {
	for j := range x {
		var sum float64
		for q, xi := range gaussNodes {
			l := 1.0
			for i, xo := range x {
				if i != j {
					l *= (xi - xo) / (x[j] - xo)
				}
			}
			sum += gaussWeights[q] * l
		}
		dst = append(dst, sum)
	}
	return dst
}

// gaussNodes and gaussWeights are the 8-point Gauss–Legendre rule on
// [0, 1] (exact for polynomials of degree up to 15).
var gaussNodes, gaussWeights = gaussLegendre(8)

// gaussLegendre returns the n-point Gauss–Legendre nodes and weights on
// [0, 1]: the roots of the Legendre polynomial P_n found by Newton's
// method from Chebyshev guesses, and w = 1/((1 − x²)·P_n'(x)²) on [−1, 1]
// halved.
func gaussLegendre(n int) (nodes, weights []float64) {
	nodes, weights = make([]float64, n), make([]float64, n)
	for i := range n {
		x := math.Cos(math.Pi * (float64(i) + 0.75) / (float64(n) + 0.5))
		var dp float64
		for range 100 {
			p0, p1 := 1.0, x // P_0, P_1, then up to P_n by Bonnet's recurrence
			for m := 2; m <= n; m++ {
				p0, p1 = p1, ((2*float64(m)-1)*x*p1-(float64(m)-1)*p0)/float64(m)
			}
			dp = float64(n) * (x*p1 - p0) / (x*x - 1)
			dx := p1 / dp
			x -= dx
			if math.Abs(dx) < 1e-16 {
				break
			}
		}
		nodes[i] = (1 - x) / 2
		weights[i] = 1 / ((1 - x*x) * dp * dp)
	}
	return nodes, weights
}
