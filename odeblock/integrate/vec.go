package integrate

import (
	"math"

	"github.com/adamnode/adamnode/tensor"
)

// Vector operations.
//
// The integrator's algorithms — the stage sums, the solution, the dense
// output, the dense-output stages, the error ratio and the first step's
// selection — are written once, over the operations below, and run on
// host slices or on tensors in a device's memory according to the
// implementation they are handed: host ones over []T (the package's
// kernels: tensor.LinearCombination split over an engine's workers,
// tensor.AxpySlice, the errscale assembly) and device ones over the
// device engine's Elementwise. Each implementation keeps its own
// arithmetic: the host forms the dense output's terms and the dense
// stages' sums in float64, the device in T (see "Solving on a device").

// combOps are the copies and linear combinations of vectors of type V
// (host slices or device tensors) that the stage sums are formed with.
type combOps[V any] interface {
	// copy sets dst = src.
	copy(dst, src V)
	// linComb sets dst = base + h·Σ cs[j]·ks[j] (base the zero V: zero),
	// skipping the zero coefficients (whose ks[j] may be the zero V), the
	// terms in order, in T.
	linComb(dst, base V, h float64, cs []float64, ks []V)
}

// vecOps are combOps with the dense output's polynomials.
type vecOps[V any] interface {
	combOps[V]
	// hermite sets dst to the cubic Hermite interpolant at x ∈ [0, 1]
	// through (y0, h·f0) and (y1, h·f1).
	hermite(dst V, x, h float64, y0, f0, y1, f1 V)
	// quartic sets dst to the quartic p with p(0) = y0, p(1) = y1,
	// p(½) = mid, p'(0) = h·f0 and p'(1) = h·f1, at x; mid is the vector
	// midBuf(dst) returned.
	quartic(dst V, x, h float64, y0, y1, mid, f0, f1 V)
	// midBuf returns where quartic's midpoint is formed for the output
	// dst: dst itself where quartic reads each element before it writes
	// it (the host), else a scratch vector of dst's length.
	midBuf(dst V) V
}

// solverOps are vecOps on a solver's buffers with the norms its step
// control takes: the host's (hostOps) or, in a device solve, the device
// engine's on the buffers the slices name (devOps). The norms cover the
// part of the state Options' ErrorLen, ErrorParts and ErrorRows say.
type solverOps[T tensor.Float] interface {
	combOps[[]T]
	// axpy sets dst = base + a·x.
	axpy(dst, base []T, a float64, x []T)
	// denseInput is linComb for a dense-output stage's input, its sum
	// formed in float64 where the implementation can (the host).
	denseInput(dst, base []T, h float64, cs []float64, ks [][]T)
	// errNorm returns the error norm of e = h·Σ cs[j]·ks[j] scaled by
	// atol + rtol·max(|y0|, |y1|): the RMS over the norm's span, or the
	// largest over its parts or rows; NaN when it is not finite.
	errNorm(h float64, cs []float64, ks [][]T, y0, y1 []T) float64
	// scaledNorm returns the norm of x scaled by atol + rtol·|y| and
	// whether x is finite over the norm's span.
	scaledNorm(x, y []T) (float64, bool)
	// sums853 returns the sums of squares of the two error estimates
	// Σ e5[j]·ks[j] and Σ e3[j]·ks[j], scaled by atol +
	// rtol·max(|y0|, |y1|), over elements [lo, hi); ok is false when one
	// is not finite.
	sums853(e5, e3 []float64, ks [][]T, y0, y1 []T, lo, hi int) (s5, s3 float64, ok bool)
	// finite reports whether every element of x is finite.
	finite(x []T) bool
}

// ops returns the vector operations of the solve under way (or of the
// last one): the device's in a device solve, else the host's.
func (s *Solver[T]) ops() solverOps[T] {
	if s.dev.on {
		return devOps[T]{s}
	}
	return hostOps[T]{s}
}

// rkStages evaluates the stages from, …, to−1 of the step g from y0 with
// the tableau tb: stage i's input y0 + h·Σ_l A[i][l]·k[l] is formed in
// in(i) and handed to eval(i, t_i, y_i), which leaves the stage's value in
// k[i] (it may replace the vector). This is the one place the stage
// inputs and times are formed: the solver's steps on the host and on a
// device, Checkpoint's recomputation on tapes and Recursive's
// re-advancing all go through it, so that they agree to the bit.
func rkStages[V any](c combOps[V], tb *Tableau, g stepGeom, y0 V, k []V, from, to int, in func(i int) V, eval func(i int, t float64, y V) error) error {
	for i := from; i < to; i++ {
		y := in(i)
		c.linComb(y, y0, g.h, tb.A[i], k)
		if err := eval(i, g.StageTime(tb, i), y); err != nil {
			return err
		}
	}
	return nil
}

// rkSolution writes the step's solution y0 + h·Σ b_i·k_i into y1. With an
// FSAL method that is the last stage's input, lastIn, which is copied.
func rkSolution[V any](c combOps[V], tb *Tableau, h float64, y0, y1, lastIn V, k []V) {
	if tb.FSAL {
		c.copy(y1, lastIn)
		return
	}
	c.linComb(y1, y0, h, tb.B, k)
}

// denseOutput writes into dst the dense output of method tb at time tq in
// the step [t, t+h] from y0 to y1 with stages ks (the dense-output stages
// after the step's) and f at its ends f0, f1: the tableau's Dense weights
// (formed in w), the quartic through its Mid point, or the cubic Hermite.
func denseOutput[V any](c vecOps[V], w *[16]float64, tb *Tableau, dst, y0, y1 V, ks []V, t, h, tq float64, f0, f1 V) {
	x := (tq - t) / h
	switch {
	case tb.Dense != nil:
		m := len(ks)
		tb.Dense(x, w[:m])
		c.linComb(dst, y0, h, w[:m], ks)
	case tb.Mid != nil:
		mid := c.midBuf(dst)
		c.linComb(mid, y0, h, tb.Mid, ks[:tb.Stages()])
		c.quartic(dst, x, h, y0, y1, mid, f0, f1)
	default:
		c.hermite(dst, x, h, y0, f0, y1, f1)
	}
}

// interpolateStep is denseOutput on host slices.
func interpolateStep[T tensor.Float](w *[16]float64, tb *Tableau, dst, y0, y1 []T, ks [][]T, t, h, tq float64, f0, f1 []T) {
	denseOutput[[]T](hostVec[T]{}, w, tb, dst, y0, y1, ks, t, h, tq, f0, f1)
}

// hostVec is vecOps on host slices, its sums split over c's workers when
// c is set.
type hostVec[T tensor.Float] struct{ c *combiner[T] }

func (hostVec[T]) copy(dst, src []T) { copy(dst, src) }

func (v hostVec[T]) linComb(dst, base []T, h float64, cs []float64, ks [][]T) {
	if v.c == nil {
		linComb(dst, base, h, cs, ks)
		return
	}
	v.c.linComb(dst, base, h, cs, ks)
}

// hermite forms each element in float64.
func (hostVec[T]) hermite(dst []T, x, h float64, y0, f0, y1, f1 []T) {
	h00 := (1 + 2*x) * (1 - x) * (1 - x)
	h10 := x * (1 - x) * (1 - x)
	h01 := x * x * (3 - 2*x)
	h11 := x * x * (x - 1)
	for i := range dst {
		dst[i] = T(h00*float64(y0[i]) + h10*h*float64(f0[i]) + h01*float64(y1[i]) + h11*h*float64(f1[i]))
	}
}

// quartic forms each element in float64 by Horner's rule; mid may be dst
// (each element is read before it is replaced).
func (hostVec[T]) quartic(dst []T, x, h float64, y0, y1, mid, f0, f1 []T) {
	for i := range dst {
		a0, a1, m := float64(y0[i]), float64(y1[i]), float64(mid[i])
		g0, g1 := h*float64(f0[i]), h*float64(f1[i])
		c4 := 2*(g1-g0) - 8*(a1+a0) + 16*m
		c3 := 5*g0 - 3*g1 + 18*a0 + 14*a1 - 32*m
		c2 := g1 - 4*g0 - 11*a0 - 5*a1 + 16*m
		dst[i] = T(a0 + x*(g0+x*(c2+x*(c3+x*c4))))
	}
}

func (hostVec[T]) midBuf(dst []T) []T { return dst }

// hostOps is solverOps on the host: the solver's buffers are its slices.
type hostOps[T tensor.Float] struct{ s *Solver[T] }

func (hostOps[T]) copy(dst, src []T) { copy(dst, src) }

func (o hostOps[T]) linComb(dst, base []T, h float64, cs []float64, ks [][]T) {
	o.s.comb.linComb(dst, base, h, cs, ks)
}

func (hostOps[T]) axpy(dst, base []T, a float64, x []T) {
	copy(dst, base)
	tensor.AxpySlice(T(a), x, dst)
}

func (hostOps[T]) denseInput(dst, base []T, h float64, cs []float64, ks [][]T) {
	for e := range dst {
		acc := 0.0
		for j, a := range cs {
			if a != 0 {
				acc += a * float64(ks[j][e])
			}
		}
		dst[e] = base[e] + T(h*acc)
	}
}

func (o hostOps[T]) errNorm(h float64, cs []float64, ks [][]T, y0, y1 []T) float64 {
	s := o.s
	if s.opt.ErrorRows > 0 {
		if r, ok := s.rowsErrNorm(h, cs, ks, y0, y1); ok {
			return r
		}
	}
	return s.mixed(func(lo, hi int) float64 { return s.scaledRange(h, cs, ks, y0, y1, lo, hi) })
}

func (o hostOps[T]) scaledNorm(x, y []T) (float64, bool) {
	s := o.s
	m, _ := s.normSpan()
	ks := [1][]T{x}
	r := s.mixed(func(lo, hi int) float64 { return s.scaledRange(1, one[:], ks[:], y, y, lo, hi) })
	return r, allFinite(x[:m])
}

// one is the coefficient of a combination of one vector.
var one = [1]float64{1}

func (o hostOps[T]) sums853(e5, e3 []float64, ks [][]T, y0, y1 []T, lo, hi int) (s5, s3 float64, ok bool) {
	atol, rtol := o.s.opt.ATol, o.s.opt.RTol
	for i := lo; i < hi; i++ {
		var a5, a3 float64
		for j, k := range ks {
			a5 += e5[j] * float64(k[i])
			a3 += e3[j] * float64(k[i])
		}
		sc := atol + rtol*math.Max(math.Abs(float64(y0[i])), math.Abs(float64(y1[i])))
		s5 += (a5 / sc) * (a5 / sc)
		s3 += (a3 / sc) * (a3 / sc)
	}
	return s5, s3, true
}

func (hostOps[T]) finite(x []T) bool { return allFinite(x) }

// tensorCombiner is vecOps on tensors in the memory of its engine's
// Elementwise (a device's): the sums are the engine's LinComb, their
// terms gathered in arrays of its own (no allocation a call).
type tensorCombiner[T tensor.Float] struct {
	ew   tensor.Elementwise[T]
	coef [16]T
	xs   [16]*tensor.Tensor[T]
	tmp  *tensor.Tensor[T] // the quartic's midpoint
}

func (c *tensorCombiner[T]) copy(dst, src *tensor.Tensor[T]) { c.ew.Copy(dst, src) }

// linComb sets z = base + h·Σ c[j]·ks[j] (base nil: zero), skipping the
// zero coefficients (whose ks[j] may be nil), in order.
func (c *tensorCombiner[T]) linComb(z, base *tensor.Tensor[T], h float64, cs []float64, ks []*tensor.Tensor[T]) {
	m := 0
	for j, cj := range cs {
		if cj != 0 {
			if m == len(c.coef) {
				panic("odeblock: more than 16 stages")
			}
			c.coef[m], c.xs[m] = T(h*cj), ks[j]
			m++
		}
	}
	if m == 0 && base == nil {
		c.ew.Fill(z, 0)
		return
	}
	c.ew.LinComb(z, base, c.coef[:m], c.xs[:m])
	clear(c.xs[:m])
}

// hermite is the cubic Hermite as one LinComb of the four vectors.
func (c *tensorCombiner[T]) hermite(dst *tensor.Tensor[T], x, h float64, y0, f0, y1, f1 *tensor.Tensor[T]) {
	x2 := x * x
	w := [4]float64{(1 + 2*x) * (1 - x) * (1 - x), h * x * (1 - x) * (1 - x), x2 * (3 - 2*x), h * x2 * (x - 1)}
	ks := [4]*tensor.Tensor[T]{y0, f0, y1, f1}
	c.linComb(dst, nil, 1, w[:], ks[:])
}

// quartic is the quartic written out as one LinComb of the five vectors:
// p(x) = (1 − 11x² + 18x³ − 8x⁴)·y0 + (−5x² + 14x³ − 8x⁴)·y1
// + 16(x² − 2x³ + x⁴)·mid + (x − 4x² + 5x³ − 2x⁴)·h·f0
// + (x² − 3x³ + 2x⁴)·h·f1.
func (c *tensorCombiner[T]) quartic(dst *tensor.Tensor[T], x, h float64, y0, y1, mid, f0, f1 *tensor.Tensor[T]) {
	x2, x3 := x*x, x*x*x
	x4 := x2 * x2
	w := [5]float64{1 - 11*x2 + 18*x3 - 8*x4, -5*x2 + 14*x3 - 8*x4, 16 * (x2 - 2*x3 + x4),
		h * (x - 4*x2 + 5*x3 - 2*x4), h * (x2 - 3*x3 + 2*x4)}
	ks := [5]*tensor.Tensor[T]{y0, y1, mid, f0, f1}
	c.linComb(dst, nil, 1, w[:], ks[:])
}

// midBuf returns the combiner's scratch tensor, made of dst's length when
// it has another.
func (c *tensorCombiner[T]) midBuf(dst *tensor.Tensor[T]) *tensor.Tensor[T] {
	if c.tmp == nil || c.tmp.Len() != dst.Len() {
		c.tmp = tensor.New[T](dst.Len())
	}
	return c.tmp
}
