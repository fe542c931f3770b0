package odeblock

import (
	"fmt"
	"math"
)

// The Adams methods of torchdiffeq's fixed_adams.py, with a fixed Step:
// the first three steps are Kutta's 3/8 rule (rk38); then
// Adams–Bashforth of order k = min(steps so far, adamsMaxOrder),
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
// torchdiffeq lets the order grow to 11; here the predictor stops at 4,
// so the methods are of a definite order (4 explicit, 5 with the
// corrector); their coefficients are the standard ones.
var (
	explicitAdams = adamsTableau("explicit_adams", false)
	implicitAdams = adamsTableau("implicit_adams", true)
	fixedAdams    = adamsTableau("fixed_adams", true)
)

const adamsMaxOrder = 4

// adamsTableau is rk38's tableau (the start-up steps) marked as Adams.
func adamsTableau(name string, implicit bool) *Tableau {
	tb := *rk38
	tb.Name, tb.Adams, tb.Implicit = name, true, implicit
	if implicit {
		tb.Order = 5 // the Adams–Moulton corrector of order 5 after Adams–Bashforth 4
	}
	return &tb
}

// Adams–Bashforth β (newest first) and Adams–Moulton μ (μ_0 for
// f_{n+1}, then newest first), by order.
var (
	bashforth = [][]float64{
		1: {1},
		2: {3.0 / 2, -1.0 / 2},
		3: {23.0 / 12, -16.0 / 12, 5.0 / 12},
		4: {55.0 / 24, -59.0 / 24, 37.0 / 24, -9.0 / 24},
	}
	moulton = [][]float64{
		1: {1},
		2: {1.0 / 2, 1.0 / 2},
		3: {5.0 / 12, 8.0 / 12, -1.0 / 12},
		4: {9.0 / 24, 19.0 / 24, -5.0 / 24, 1.0 / 24},
		5: {251.0 / 720, 646.0 / 720, -264.0 / 720, 106.0 / 720, -19.0 / 720},
	}
)

// adamsWork is the history of f at the past step starts, newest first.
type adamsWork[T any] struct {
	hist [][]T
	at   []float64 // their times
}

// adamsStep takes the step g: rk38 until three past f are known, then the
// Adams update (s.k[0] = f(t_n, y_n) is the newest).
func (s *Solver[T]) adamsStep(eval evalFunc[T], g stepGeom) error {
	w := &s.adams
	if len(w.at) == 0 || w.at[0] != g.t {
		// Push f_n (copied: s.k[0] is reused).
		var buf []T
		if len(w.hist) == adamsMaxOrder {
			buf = w.hist[len(w.hist)-1]
			w.hist, w.at = w.hist[:len(w.hist)-1], w.at[:len(w.at)-1]
		} else {
			buf = make([]T, s.n)
		}
		copy(buf, s.k[0])
		w.hist = append([][]T{buf}, w.hist...)
		w.at = append([]float64{g.t}, w.at...)
	}
	k := min(len(w.hist), adamsMaxOrder)
	if k < 3 {
		return s.rkStep(eval, g)
	}
	h := g.h
	beta := bashforth[k]
	for i := range s.y1 {
		var d float64
		for j, b := range beta {
			d += b * float64(w.hist[j][i])
		}
		s.y1[i] = s.y[i] + T(h*d)
	}
	if !s.tb.Implicit {
		return nil
	}
	mu := moulton[k+1]
	// δ = h·Σ_{j≥1} μ_j·f_{n+1−j}; then y1 = y + h·μ_0·f(t1, y1) + δ.
	delta := s.tmp
	for i := range delta {
		var d float64
		for j, m := range mu[1:] {
			d += m * float64(w.hist[j][i])
		}
		delta[i] = T(h * d)
	}
	f := s.k[len(s.k)-1]
	var last float64
	for iter := 0; iter < 4; iter++ {
		if err := eval(evalStage, len(s.k)-1, g.end, s.y1, f); err != nil {
			return err
		}
		var worst float64
		for i := range s.y1 {
			old := float64(s.y1[i])
			nw := float64(s.y[i]) + h*mu[0]*float64(f[i]) + float64(delta[i])
			s.y1[i] = T(nw)
			sc := s.opt.ATol + s.opt.RTol*math.Max(math.Abs(old), math.Abs(nw))
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
