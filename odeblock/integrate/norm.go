package integrate

import (
	"math"
	"slices"

	"github.com/adamnode/adamnode/tensor"
)

// quadrature returns how many trailing elements explicitRK.step may leave out
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
// embedded error estimate of the step of size h in b (with E3, Hairer's
// combination of two, errorRatio853). NaN when the state is not finite.
func (s *Solver[T]) errorRatio(b stepBufs[T], h float64) float64 {
	if s.tb.E3 != nil {
		return s.mixed(func(lo, hi int) float64 { return s.errorRatio853(b, h, lo, hi) })
	}
	return s.ops().errNorm(h, s.tb.E, b.k, b.y0, b.y1)
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

// estimate writes elements lo, lo+1, … of h·Σ cs[j]·ks[j] into e.
func estimate[T tensor.Float](e []T, h float64, cs []float64, ks [][]T, lo int) {
	var kb [16][]T
	for j, k := range ks {
		kb[j] = k[lo : lo+len(e)]
	}
	linComb(e, nil, h, cs, kb[:len(ks)])
}

// errorRatio853 is errorRatio's RMS over elements [lo, hi) for a tableau
// with E3 (see Tableau.E3): err5²/√(err5² + 0.01·err3²) from the sums of
// squares of both estimates.
func (s *Solver[T]) errorRatio853(b stepBufs[T], h float64, lo, hi int) float64 {
	if hi <= lo {
		return 0
	}
	s5, s3, ok := s.ops().sums853(s.tb.E, s.tb.E3, b.k, b.y0, b.y1, lo, hi)
	switch {
	case !ok:
		return math.NaN()
	case s5 == 0 && s3 == 0:
		return 0
	}
	return math.Abs(h) * s5 / math.Sqrt((s5+0.01*s3)*float64(hi-lo))
}
