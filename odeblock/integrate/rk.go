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
	interpolateStep(&s.w, s.tb, dst, s.y, s.y1, s.kall, g.t, g.h, tq, f0, f1)
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
	ops := s.ops()
	err := rkStages[[]T](ops, tb, g, s.y, s.k, 1, len(s.k), in, func(i int, t float64, y []T) error {
		dy := s.k[i]
		if q > 0 && tb.B[i] == 0 && (tb.E == nil || tb.E[i] == 0) && !(tb.FSAL && i == last) {
			dy = dy[:n-q]
		}
		return eval(evalStage, i, t, y, dy)
	})
	if err != nil {
		return err
	}
	rkSolution[[]T](ops, s.tb, g.h, s.y, s.y1, s.tmp, s.k)
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
// RMS over the first ErrorLen elements (all when 0), the largest RMS of
// the ErrorParts or of the ErrorRows rows; err = h·Σ E_j·k_j is the
// embedded error estimate of the step of size h just taken (with E3,
// Hairer's combination of two, errorRatio853). NaN when the state is not
// finite.
func (s *Solver[T]) errorRatio(h float64) float64 {
	if s.tb.E3 != nil {
		return s.mixed(func(lo, hi int) float64 { return s.errorRatio853(h, lo, hi) })
	}
	return s.ops().errNorm(h, s.tb.E, s.k, s.y, s.y1)
}

// rowsErrorRatio is rowsErrNorm of the step's error estimate.
func (s *Solver[T]) rowsErrorRatio(h float64) (norm float64, ok bool) {
	return s.rowsErrNorm(h, s.tb.E, s.k, s.y, s.y1)
}

// rowsErrNorm is the host's errNorm with ErrorRows in one pass over the
// state: the scaled error formed a block at a time, as scaledRange does,
// each square added to its row's sum (in float64, in the order of the
// row's elements, so that a row's sum is the same in any batch). ok is
// false when that is not exact enough — a square overflowed or
// underflowed in T, or the tolerances underflow T — and the caller takes
// the norm row by row (mixed), which scales.
func (s *Solver[T]) rowsErrNorm(h float64, cs []float64, ks [][]T, y0, y1 []T) (norm float64, ok bool) {
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
		estimate(e, h, cs, ks, b)
		scaleError(e, y0[b:b+len(e)], y1[b:b+len(e)], atol, rtol)
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
	if s.tb.E3 != nil {
		return s.errorRatio853(h, lo, hi)
	}
	return s.scaledRange(h, s.tb.E, s.k, s.y, s.y1, lo, hi)
}

// scaledRange returns the RMS over elements [lo, hi) of e / (atol +
// rtol·max(|y0|, |y1|)), e = h·Σ cs[j]·ks[j] formed a block at a time in
// a small buffer: no state-sized buffer, one pass over the terms.
func (s *Solver[T]) scaledRange(h float64, cs []float64, ks [][]T, y0, y1 []T, lo, hi int) float64 {
	n := hi - lo
	if n <= 0 {
		return 0
	}
	scale := func(i int) float64 {
		return s.opt.ATol + s.opt.RTol*math.Max(math.Abs(float64(y0[i])), math.Abs(float64(y1[i])))
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
		estimate(e, h, cs, ks, b)
		scaleError(e, y0[b:b+len(e)], y1[b:b+len(e)], atol, rtol)
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
			estimate(one[:], h, cs, ks, lo+i)
			return float64(one[0]) / scale(lo+i)
		})
	}
	return math.Sqrt(sum / float64(n))
}

// errorEstimate writes elements lo, lo+1, … of the step's error estimate
// h·Σ E_j·k_j into e.
func (s *Solver[T]) errorEstimate(e []T, h float64, lo int) { estimate(e, h, s.tb.E, s.k, lo) }

// estimate writes elements lo, lo+1, … of h·Σ cs[j]·ks[j] into e.
func estimate[T tensor.Float](e []T, h float64, cs []float64, ks [][]T, lo int) {
	var kb [16][]T
	for j, k := range ks {
		kb[j] = k[lo : lo+len(e)]
	}
	linComb(e, nil, h, cs, kb[:len(ks)])
}

// errorRatio853 is errorRatioRange for a tableau with E3 (see Tableau.E3):
// err5²/√(err5² + 0.01·err3²) from the sums of squares of both estimates.
func (s *Solver[T]) errorRatio853(h float64, lo, hi int) float64 {
	if hi <= lo {
		return 0
	}
	s5, s3, ok := s.ops().sums853(s.tb.E, s.tb.E3, s.k, s.y, s.y1, lo, hi)
	switch {
	case !ok:
		return math.NaN()
	case s5 == 0 && s3 == 0:
		return 0
	}
	return math.Abs(h) * s5 / math.Sqrt((s5+0.01*s3)*float64(hi-lo))
}

// denseStages evaluates the dense-output stages of the accepted step g
// (Tableau.DenseC), once per step.
func (r *solveRun[T]) denseStages(g stepGeom) error {
	s := r.s
	if s.kdAt == g.t && !math.IsNaN(s.kdAt) {
		return nil
	}
	ops := s.ops()
	for i, row := range s.tb.DenseA {
		ops.denseInput(s.tmp, s.y, g.h, row, s.kall[:len(row)])
		if err := r.eval(evalProbe, 0, g.t+s.tb.DenseC[i]*g.h, s.tmp, s.kd[i]); err != nil {
			return err
		}
	}
	s.kdAt = g.t
	return nil
}
