package integrate

import (
	"math"
	"slices"

	"github.com/adamnode/adamnode/tensor"
)

// explicitRK is the method of every Tableau without a family: an explicit
// Runge–Kutta method with its embedded error estimate (E, and E3 for
// dop853), the step-size controller of Options (I or PI) and its dense
// output (Dense, Mid or the cubic Hermite). The other families reuse its
// error norm, controller and dense output over their own stages.
type explicitRK[T tensor.Float] struct{}

func (explicitRK[T]) begin(*Solver[T], float64) {}

func (explicitRK[T]) step(s *Solver[T], eval evalFunc[T], g stepGeom) error { return s.rkStep(eval, g) }

func (explicitRK[T]) errorRatio(s *Solver[T], h float64) float64 { return s.errorRatio(h) }

func (explicitRK[T]) accept(*Solver[T], stepGeom, float64) {}

// next is the controller's step: after an accepted step it notes the
// step's error ratio (the PI controller's history); after a step
// rejected for NaN or Inf it is DFactor times the step (at least
// MinStep).
func (explicitRK[T]) next(s *Solver[T], h, ratio float64, accepted bool) float64 {
	if !accepted && math.IsNaN(ratio) {
		return s.clampStep(h*s.opt.DFactor, math.Copysign(1, h))
	}
	next := s.nextStep(h, ratio, accepted)
	if accepted {
		s.ctl.accept(ratio)
	}
	return next
}

func (explicitRK[T]) endSlope() bool { return true }

func (explicitRK[T]) interpolate(s *Solver[T], dst []T, g stepGeom, tq float64, f0, f1 []T) {
	interpolateStep(s.tb, dst, s.y, s.y1, s.kall, g.t, g.h, tq, f0, f1)
}

func (explicitRK[T]) log(s *Solver[T], l *denseLog[T], g stepGeom, f0, f1 []T) {
	if s.dev.on {
		l.addOn(&s.dev, s.tb, g, s.y, s.y1, s.kall, f0, f1)
		return
	}
	l.add(s.tb, g, s.y, s.y1, s.kall, f0, f1)
}

// rkStep is step for an explicit Runge–Kutta method.
func (s *Solver[T]) rkStep(eval evalFunc[T], g stepGeom) error {
	n, q := len(s.tmp), s.quadrature()
	tb, last := s.tb, len(s.k)-1
	// With quadratures, the stage inputs stop short of them but for an
	// FSAL method's last (the solution), and the stages nothing weights
	// leave them out of their derivative.
	in := func(i int) []T {
		if q > 0 && !(tb.FSAL && i == last) {
			return s.tmp[:n-q]
		}
		return s.tmp
	}
	err := rkStages(&s.comb, tb, g, s.y, s.k, 1, len(s.k), in, func(i int, t float64, y []T) error {
		dy := s.k[i]
		if q > 0 && tb.B[i] == 0 && (tb.E == nil || tb.E[i] == 0) && !(tb.FSAL && i == last) {
			dy = dy[:n-q]
		}
		return eval(evalStage, i, t, y, dy)
	})
	if err != nil {
		return err
	}
	rkSolution(&s.comb, s.tb, g.h, s.y, s.y1, s.tmp, s.k)
	return nil
}

// quadrature returns how many trailing elements rkStep may leave out
// (Options.Quadrature), or 0 when this solve reads whole stages: dense
// output for an output time inside it or an event, kept steps, the
// second error estimate of dop853 and methods with dense stages.
func (s *Solver[T]) quadrature() int {
	if s.opt.Quadrature == 0 || s.Event != nil || s.keep != nil || len(s.run.ts) > 2 || s.tb.E3 != nil || len(s.tb.DenseC) > 0 {
		return 0
	}
	return s.opt.Quadrature
}

// errorRatio returns the norm of err / (atol + rtol·max(|y0|, |y1|)): its
// RMS over the first ErrorLen elements (all when 0), or the largest RMS of
// the ErrorParts; err = h·Σ E_j·k_j is the embedded error estimate of the
// step of size h just taken. NaN when the state is not finite. err is
// formed a block at a time in a small buffer: no state-sized buffer, one
// pass over the stages.
func (s *Solver[T]) errorRatio(h float64) float64 {
	if s.dev.on {
		return s.devErrorRatio(h)
	}
	if s.opt.ErrorRows > 0 && s.tb.E3 == nil {
		if r, ok := s.rowsErrorRatio(h); ok {
			return r
		}
	}
	return s.mixed(func(lo, hi int) float64 { return s.errorRatioRange(h, lo, hi) })
}

// rowsErrorRatio is errorRatio with ErrorRows in one pass over the state:
// the scaled error formed a block at a time, as errorRatioRange does, each
// square added to its row's sum (in float64, in the order of the row's
// elements, so that a row's sum is the same in any batch). ok is false
// when that is not exact enough — a square overflowed or underflowed in
// T, or the tolerances underflow T — and the caller takes the norm row by
// row (mixed), which scales.
func (s *Solver[T]) rowsErrorRatio(h float64) (norm float64, ok bool) {
	atol, rtol := T(s.opt.ATol), T(s.opt.RTol)
	if atol == 0 || rtol == 0 && s.opt.RTol != 0 {
		return 0, false
	}
	rows, w := s.opt.ErrorRows, s.opt.ErrorRowLen
	if cap(s.rowSums) < rows {
		s.rowSums = make([]float64, rows)
	}
	sums := s.rowSums[:rows]
	clear(sums)
	row, col := 0, 0 // of the block's first element
	for b := 0; b < s.n; b += errBlock {
		e := s.errBuf[:min(errBlock, s.n-b)]
		s.errorEstimate(e, h, b)
		scaleError(e, s.y[b:b+len(e)], s.y1[b:b+len(e)], atol, rtol)
		for _, v := range e {
			sq := T(v * v)
			if sq == 0 && v != 0 || math.IsInf(float64(sq), 0) {
				return 0, false
			}
			sums[row] += float64(sq)
			if col++; col == w {
				col = 0
				if row++; row == rows {
					row = 0
				}
			}
		}
	}
	per := float64(s.n / rows)
	for _, sum := range sums {
		q := math.Sqrt(sum / per)
		if math.IsNaN(q) {
			return q, true
		}
		norm = math.Max(norm, q)
	}
	return norm, true
}

// errorRatioRange is errorRatio's RMS over elements [lo, hi).
func (s *Solver[T]) errorRatioRange(h float64, lo, hi int) float64 {
	n := hi - lo
	if n <= 0 {
		return 0
	}
	if s.tb.E3 != nil {
		return s.errorRatio853(h, lo, hi)
	}
	scale := func(i int) float64 {
		return s.opt.ATol + s.opt.RTol*math.Max(math.Abs(float64(s.y[i])), math.Abs(float64(s.y1[i])))
	}
	// Each block's terms are formed and summed in T (their sum taken into
	// float64): the scalar float64 arithmetic per element cost as much as
	// the rest of a step of a small MLP field.
	// A block whose squares overflow or underflow in T, or tolerances
	// that underflow in T, take the scaled float64 norm below.
	buf := &s.errBuf
	var sum float64
	atol, rtol := T(s.opt.ATol), T(s.opt.RTol)
	scaled := atol == 0 || rtol == 0 && s.opt.RTol != 0
	for b := lo; b < hi && !scaled; b += errBlock {
		e := buf[:min(errBlock, hi-b)]
		s.errorEstimate(e, h, b)
		y0, y1 := s.y[b:b+len(e)], s.y1[b:b+len(e)]
		scaleError(e, y0, y1, atol, rtol)
		acc := sumSquares(e)
		if acc == 0 && slices.ContainsFunc(e, func(x T) bool { return x != 0 }) {
			scaled = true // the squares underflowed
		}
		sum += float64(acc)
	}
	if scaled || math.IsInf(sum, 1) {
		// A square overflowed (tolerances far below the error): the norm
		// is large but not infinite; or one underflowed.
		var one [1]T
		return rms(n, func(i int) float64 {
			s.errorEstimate(one[:], h, lo+i)
			return float64(one[0]) / scale(lo+i)
		})
	}
	return math.Sqrt(sum / float64(n))
}

// errorEstimate writes elements lo, lo+1, … of the step's error estimate
// h·Σ E_j·k_j into e.
func (s *Solver[T]) errorEstimate(e []T, h float64, lo int) {
	var ks [16][]T
	for j, k := range s.k {
		ks[j] = k[lo : lo+len(e)]
	}
	linComb(e, nil, h, s.tb.E, ks[:len(s.k)])
}

// errorRatio853 is errorRatioRange for a tableau with E3 (see Tableau.E3).
func (s *Solver[T]) errorRatio853(h float64, lo, hi int) float64 {
	var s5, s3 float64
	for i := lo; i < hi; i++ {
		var e5, e3 float64
		for j, k := range s.k {
			e5 += s.tb.E[j] * float64(k[i])
			e3 += s.tb.E3[j] * float64(k[i])
		}
		sc := s.opt.ATol + s.opt.RTol*math.Max(math.Abs(float64(s.y[i])), math.Abs(float64(s.y1[i])))
		s5 += (e5 / sc) * (e5 / sc)
		s3 += (e3 / sc) * (e3 / sc)
	}
	if s5 == 0 && s3 == 0 {
		return 0
	}
	return math.Abs(h) * s5 / math.Sqrt((s5+0.01*s3)*float64(hi-lo))
}

// interpolateStep writes into dst the dense output of method tb at time tq
// in the step [t, t+h] from y0 to y1 with stages ks (the dense-output
// stages after the step's) and f at its ends f0, f1.
func interpolateStep[T tensor.Float](tb *Tableau, dst, y0, y1 []T, ks [][]T, t, h, tq float64, f0, f1 []T) {
	x := (tq - t) / h
	if tb.Dense != nil {
		var w [16]float64
		m := len(ks)
		tb.Dense(x, w[:m])
		linComb(dst, y0, h, w[:m], ks)
		return
	}
	if tb.Mid != nil {
		// Quartic p(x) with p(0)=y0, p(1)=y1, p(½)=ymid, p'(0)=h·f0, p'(1)=h·f1;
		// ymid is formed in dst, each element read before it is replaced.
		linComb(dst, y0, h, tb.Mid, ks[:tb.Stages()])
		for i := range dst {
			a0, a1, m := float64(y0[i]), float64(y1[i]), float64(dst[i])
			g0, g1 := h*float64(f0[i]), h*float64(f1[i])
			c4 := 2*(g1-g0) - 8*(a1+a0) + 16*m
			c3 := 5*g0 - 3*g1 + 18*a0 + 14*a1 - 32*m
			c2 := g1 - 4*g0 - 11*a0 - 5*a1 + 16*m
			dst[i] = T(a0 + x*(g0+x*(c2+x*(c3+x*c4))))
		}
		return
	}
	// Cubic Hermite through (y0, h·f0) and (y1, h·f1).
	h00 := (1 + 2*x) * (1 - x) * (1 - x)
	h10 := x * (1 - x) * (1 - x)
	h01 := x * x * (3 - 2*x)
	h11 := x * x * (x - 1)
	for i := range dst {
		dst[i] = T(h00*float64(y0[i]) + h10*h*float64(f0[i]) + h01*float64(y1[i]) + h11*h*float64(f1[i]))
	}
}

// denseStages evaluates the dense-output stages of the accepted step g
// (Tableau.DenseC), once per step.
func (r *solveRun[T]) denseStages(g stepGeom) error {
	s := r.s
	if s.kdAt == g.t && !math.IsNaN(s.kdAt) {
		return nil
	}
	if s.dev.on {
		if err := r.devDenseStages(g); err != nil {
			return err
		}
		s.kdAt = g.t
		return nil
	}
	tb, n := s.tb, s.n
	for i, row := range tb.DenseA {
		for e := range n {
			acc := 0.0
			for j, a := range row {
				if a != 0 {
					acc += a * float64(s.kall[j][e])
				}
			}
			s.tmp[e] = s.y[e] + T(g.h*acc)
		}
		if err := r.eval(evalProbe, 0, g.t+tb.DenseC[i]*g.h, s.tmp, s.kd[i]); err != nil {
			return err
		}
	}
	s.kdAt = g.t
	return nil
}
