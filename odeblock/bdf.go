package odeblock

import (
	"errors"
	"fmt"
	"math"

	"github.com/adamnode/adamnode/tensor"
)

// bdf is the variable-order, quasi-constant step size backward
// differentiation method of Shampine and Reichelt's ode15s (MATLAB) and
// SciPy's BDF: orders 1 to 5, the numerical differentiation formulas
// (NDF: BDF with the κ corrections, better stability per cost) of Klopfenstein
// and Shampine, the history kept as backward differences, which a change
// of step size rescales. Each step predicts from the differences and
// corrects by simplified Newton iterations with I − c·J (c = h/α_k), the
// Jacobian J by finite differences formed only when the iteration fails to
// converge, the LU only when h or the order changes. The order moves by
// one up or down after k + 1 steps of equal size, to the neighbour whose
// error estimate allows the largest next step. Dense output interpolates
// the differences. A method for small stiff systems (the Jacobian is dense).
var bdf = &Tableau{
	Name:          "bdf",
	C:             []float64{0},
	A:             [][]float64{{}},
	B:             []float64{1},
	E:             []float64{0}, // adaptive; the error is the method's own (below)
	Order:         5,            // the highest it uses
	EstimateOrder: 2,            // the first step: Hairer's rule with the exponent ½ of an order-1 method (SciPy's)
	bdf:           true,
}

const bdfMaxOrder = 5

// The NDF coefficients, by order k = 0…5: κ_k, γ_k = Σ_{j≤k} 1/j,
// α_k = (1 − κ_k)·γ_k, and the error constants κ_k·γ_k + 1/(k + 1).
var bdfKappa = [bdfMaxOrder + 2]float64{0, -0.1850, -1.0 / 9, -0.0823, -0.0415, 0, 0}

var bdfGamma, bdfAlpha, bdfErrConst [bdfMaxOrder + 2]float64

func init() {
	for k := 1; k <= bdfMaxOrder+1; k++ {
		bdfGamma[k] = bdfGamma[k-1] + 1/float64(k)
	}
	for k := range bdfMaxOrder + 2 {
		bdfAlpha[k] = (1 - bdfKappa[k]) * bdfGamma[k]
		bdfErrConst[k] = bdfKappa[k]*bdfGamma[k] + 1/float64(k+1)
	}
}

// bdfWork is the state of a BDF solve, in float64: the differences D
// (D[0] = y, D[j] = ∇ʲy scaled to the step), and the Newton iteration's
// vectors.
type bdfWork struct {
	n                           int
	D                           [][]float64 // bdfMaxOrder + 3 rows of n
	pred, psi, d, y, dy, scale  []float64
	f                           []float64
	ru, r, u                    []float64 // (order+1)² scratch for rescaling
	next                        [][]float64
	order                       int
	luValid, jacCurrent, jacSet bool
	nonFinite                   bool // the last Newton iteration met a non-finite f
}

// errNonFiniteJacobian: the finite-difference Jacobian has NaN or Inf in
// it (the step is rejected as for a NaN state).
var errNonFiniteJacobian = errors.New("the Jacobian is not finite")

// allFiniteF reports whether every element of x is finite.
func allFiniteF(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

func (w *bdfWork) ensure(n int) {
	if w.n == n && w.D != nil {
		return
	}
	w.n = n
	w.D = make([][]float64, bdfMaxOrder+3)
	for i := range w.D {
		w.D[i] = make([]float64, n)
	}
	w.next = make([][]float64, bdfMaxOrder+1)
	for i := range w.next {
		w.next[i] = make([]float64, n)
	}
	for _, v := range []*[]float64{&w.pred, &w.psi, &w.d, &w.y, &w.dy, &w.scale, &w.f} {
		*v = make([]float64, n)
	}
	m := (bdfMaxOrder + 1) * (bdfMaxOrder + 1)
	w.ru, w.r, w.u = make([]float64, m), make([]float64, m), make([]float64, m)
}

// bdfR writes into m (order+1 square, row-major) the matrix R(order,
// factor) of the rescaling of the differences: row 0 ones, then the
// cumulative products down each column of (i − 1 − factor·j)/i.
func bdfR(m []float64, order int, factor float64) {
	k := order + 1
	for j := range k {
		m[j] = 1
	}
	for i := 1; i < k; i++ {
		for j := range k {
			v := 0.0
			if j > 0 {
				v = (float64(i) - 1 - factor*float64(j)) / float64(i)
			}
			m[i*k+j] = m[(i-1)*k+j] * v
		}
	}
}

// rescale changes the differences to a step factor times the current one:
// D[0…order] ← (R·U)ᵀ·D[0…order], R = R(order, factor), U = R(order, 1).
func (w *bdfWork) rescale(factor float64) {
	k := w.order + 1
	bdfR(w.r, w.order, factor)
	bdfR(w.u, w.order, 1)
	for i := range k {
		for j := range k {
			s := 0.0
			for l := range k {
				s += w.r[i*k+l] * w.u[l*k+j]
			}
			w.ru[i*k+j] = s
		}
	}
	for j := range k {
		nj := w.next[j]
		clear(nj)
		for i := range k {
			c := w.ru[i*k+j]
			if c == 0 {
				continue
			}
			for e, v := range w.D[i] {
				nj[e] += c * v
			}
		}
	}
	for j := range k {
		copy(w.D[j], w.next[j])
	}
	w.luValid = false
}

// bdfSolve runs the solve r from its start (f at the start in s.k[0], the
// first step r.h chosen) with the BDF method.
func (r *solveRun[T]) bdfSolve() error {
	h := r.bdfStart()
	ntol := math.Max(10*eps/r.s.opt.RTol, math.Min(0.03, math.Sqrt(r.s.opt.RTol)))
	nEqual := 0
	for !r.done {
		if r.steps >= r.s.opt.MaxSteps {
			return r.fail(r.t, h, fmt.Errorf("%w: %d steps did not reach t=%g", ErrMaxSteps, r.steps, r.tEnd))
		}
		r.steps++
		h, nEqual = r.bdfLandOnEnd(h, nEqual)
		if tiny := 4 * eps * math.Max(math.Abs(r.t), math.Abs(r.t+h)); math.Abs(h) <= tiny {
			err := ErrStepUnderflow
			if r.lastNonFinite {
				err = ErrNonFinite
			}
			return r.fail(r.t, h, err)
		}
		tNew := r.t + h
		if h == r.tEnd-r.t {
			tNew = r.tEnd
		}
		w, k := &r.s.bdf, r.s.bdf.order
		r.bdfPredict(k)
		converged, iters, bad, err := r.bdfCorrect(tNew, h/bdfAlpha[k], ntol)
		if err != nil {
			return r.fail(r.t, h, err)
		}
		if !converged {
			ratio := math.Inf(1) // Newton did not converge: a smaller step
			if bad || w.nonFinite {
				ratio = math.NaN()
			}
			if h, err = r.bdfReject(h, tNew, 0.5, ratio); err != nil {
				return err
			}
			nEqual = 0
			continue
		}
		safety := 0.9 * (2*bdfNewtonMax + 1) / float64(2*bdfNewtonMax+iters)
		for i := range r.s.n {
			w.scale[i] = r.s.opt.ATol + r.s.opt.RTol*math.Abs(w.y[i])
		}
		errNorm := r.bdfNorm(w.d, bdfErrConst[k])
		if !(errNorm <= 1) {
			factor := 0.2
			if !math.IsNaN(errNorm) {
				factor = math.Max(0.2, safety*math.Pow(errNorm, -1/float64(k+1)))
			}
			if h, err = r.bdfReject(h, tNew, factor, errNorm); err != nil {
				return err
			}
			nEqual = 0
			continue
		}
		if err := r.bdfAccept(h, tNew, k, errNorm); err != nil || r.hit || r.done {
			return err
		}
		if nEqual++; nEqual < k+1 {
			continue
		}
		h = r.bdfNextStep(h, k, errNorm, safety)
		nEqual = 0
	}
	return nil
}

// bdfNewtonMax is the most Newton iterations of a BDF step.
const bdfNewtonMax = 4

// bdfStart sets the BDF state at the solve's start (order 1, the
// differences of y and h·f) and returns the first step.
func (r *solveRun[T]) bdfStart() float64 {
	s := r.s
	w := &s.bdf
	w.ensure(s.n)
	w.order, w.luValid, w.jacCurrent, w.jacSet = 1, false, false, false
	for i := range w.D {
		clear(w.D[i])
	}
	for i := range s.n {
		w.D[0][i] = float64(s.y[i])
		w.D[1][i] = r.h * float64(s.k[0][i])
	}
	return r.h
}

// bdfLandOnEnd stretches or cuts the step h to land on the end when it
// would reach or nearly reach it (the differences rescaled, the count of
// equal steps restarted), and returns it and that count.
func (r *solveRun[T]) bdfLandOnEnd(h float64, nEqual int) (float64, int) {
	if rem := r.tEnd - r.t; math.Abs(h) >= math.Abs(rem) || math.Abs(rem-h) <= 1e-9*math.Abs(h) {
		if h != rem {
			r.s.bdf.rescale(rem / h)
			return rem, 0
		}
	}
	return h, nEqual
}

// bdfPredict sets the prediction Σ_j D_j, ψ and the error scale at order k.
func (r *solveRun[T]) bdfPredict(k int) {
	s, w := r.s, &r.s.bdf
	for i := range s.n {
		p, q := 0.0, 0.0
		for j := 0; j <= k; j++ {
			p += w.D[j][i]
		}
		for j := 1; j <= k; j++ {
			q += bdfGamma[j] * w.D[j][i]
		}
		w.pred[i], w.psi[i] = p, q/bdfAlpha[k]
		w.scale[i] = s.opt.ATol + s.opt.RTol*math.Abs(p)
	}
}

// bdfCorrect solves the corrector at tNew with I − c·J, refreshing the
// Jacobian once when the Newton iteration with an old one does not
// converge. bad reports a Jacobian or LU that is not finite (f turned NaN
// or Inf near the prediction), which rejects the step as a NaN in the
// state does; err is a failure that ends the solve.
func (r *solveRun[T]) bdfCorrect(tNew, c, ntol float64) (converged bool, iters int, bad bool, err error) {
	s, w := r.s, &r.s.bdf
	if !w.jacSet {
		if err := r.bdfJacobian(tNew); errors.Is(err, errNonFiniteJacobian) {
			return false, 0, true, nil
		} else if err != nil {
			return false, 0, false, err
		}
	}
	for {
		if !w.luValid {
			if err := s.ros.factor(c); err != nil {
				if !allFiniteF(s.ros.jac) {
					return false, iters, true, nil
				}
				return false, iters, false, fmt.Errorf("%w: the BDF matrix I − c·J is singular at t=%g", ErrStepUnderflow, tNew)
			}
			s.run.st.LUs++
			w.luValid = true
		}
		if converged, iters, err = r.bdfNewton(tNew, c, bdfNewtonMax, ntol); err != nil || converged || w.jacCurrent {
			return converged, iters, false, err
		}
		// Not converged with an old Jacobian: a fresh one at the
		// prediction, then try again.
		if err := r.bdfJacobian(tNew); errors.Is(err, errNonFiniteJacobian) {
			return false, iters, true, nil
		} else if err != nil {
			return false, iters, false, err
		}
	}
}

// bdfReject rejects the step h to tNew with error ratio ratio (NaN: not
// finite) and returns the step to retry with, h·factor (at least MinStep),
// or the error that ends the solve.
func (r *solveRun[T]) bdfReject(h, tNew, factor, ratio float64) (float64, error) {
	s, w := r.s, &r.s.bdf
	r.st.Rejected++
	if math.IsNaN(ratio) {
		if r.nonFinite++; r.nonFinite > maxNonFiniteRejections {
			return h, r.fail(r.t, h, fmt.Errorf("%w: %d steps rejected for NaN or Inf", ErrNonFinite, r.nonFinite-1))
		}
	}
	if s.opt.MinStep > 0 && math.Abs(h) <= s.opt.MinStep {
		err := ErrStepUnderflow
		if math.IsNaN(ratio) {
			err = ErrNonFinite
		}
		return h, r.fail(r.t, h, fmt.Errorf("%w: rejected at the minimum step", err))
	}
	for i := range s.n {
		s.y1[i] = T(w.y[i]) // the rejected solution, for the hook
	}
	r.lastNonFinite = math.IsNaN(ratio)
	if err := r.bdfHook(h, tNew, false, ratio); err != nil {
		return h, err
	}
	if mn := s.opt.MinStep; mn > 0 && math.Abs(h*factor) < mn {
		factor = mn / math.Abs(h)
	}
	w.rescale(factor)
	return h * factor, nil
}

// bdfAccept takes the accepted step h to tNew at order k: the differences
// updated, the hook, events, outputs and the kept log; it sets r.done at
// the end (r.hit at a terminal event).
func (r *solveRun[T]) bdfAccept(h, tNew float64, k int, errNorm float64) error {
	s, w := r.s, &r.s.bdf
	r.st.Accepted++
	r.lastNonFinite = false
	w.jacCurrent = false
	for i := range s.n {
		w.D[k+2][i] = w.d[i] - w.D[k+1][i]
		w.D[k+1][i] = w.d[i]
	}
	for j := k; j >= 0; j-- {
		for i := range s.n {
			w.D[j][i] += w.D[j+1][i]
		}
	}
	for i := range s.n {
		s.y1[i] = T(w.D[0][i])
	}
	if err := r.bdfHook(h, tNew, true, errNorm); err != nil {
		return err
	}
	if s.Event != nil {
		g := stepGeom{t: r.t, h: h, end: tNew}
		if err := r.eventIn(g, func(dst []T, tq float64) { bdfInterpolate(dst, w.D, k, tNew, h, tq) }); err != nil || r.hit {
			return err
		}
	}
	r.bdfEmit(tNew, h, k)
	if s.keep != nil {
		s.keep.addBDF(s.tb, r.t, h, tNew, k, w.D, s.y1)
	}
	copy(s.y, s.y1)
	r.t, r.t0 = tNew, tNew
	r.done = tNew == r.tEnd
	return nil
}

// bdfNextStep chooses the order of the next step, of k − 1, k and k + 1
// the one allowing the largest step, and returns that step (at most 10
// times h and MaxStep), the differences rescaled to it.
func (r *solveRun[T]) bdfNextStep(h float64, k int, errNorm, safety float64) float64 {
	s, w := r.s, &r.s.bdf
	errM, errP := math.Inf(1), math.Inf(1)
	if k > 1 {
		errM = r.bdfNorm(w.D[k], bdfErrConst[k-1])
	}
	if k < bdfMaxOrder {
		errP = r.bdfNorm(w.D[k+2], bdfErrConst[k+1])
	}
	factors := [3]float64{math.Pow(errM, -1/float64(k)), math.Pow(errNorm, -1/float64(k+1)), math.Pow(errP, -1/float64(k+2))}
	best := 1
	for i, f := range factors {
		if f > factors[best] || math.IsNaN(factors[best]) {
			best = i
		}
	}
	w.order = k + best - 1
	factor := math.Min(10, safety*factors[best])
	if math.IsNaN(factor) || math.IsInf(factor, 1) {
		factor = 10
	}
	if mx := s.opt.MaxStep; mx > 0 && math.Abs(h*factor) > mx {
		factor = mx / math.Abs(h)
	}
	w.rescale(factor)
	return h * factor
}

// bdfNewton solves the corrector at tNew from the prediction by simplified
// Newton iterations with the factorised I − c·J: converged (the
// iterations' contraction says the remaining correction is below tol),
// and the number of iterations. A non-finite f ends it unconverged.
func (r *solveRun[T]) bdfNewton(tNew, c float64, maxIter int, tol float64) (bool, int, error) {
	s, w := r.s, &r.s.bdf
	n := s.n
	clear(w.d)
	copy(w.y, w.pred)
	w.nonFinite = false
	old := -1.0
	k := 0
	for ; k < maxIter; k++ {
		for i := range n {
			s.tmp[i] = T(w.y[i])
		}
		if err := r.eval(evalStage, 0, tNew, s.tmp, s.y1); err != nil {
			return false, k + 1, err
		}
		for i := range n {
			v := float64(s.y1[i])
			if math.IsNaN(v) || math.IsInf(v, 0) {
				w.nonFinite = true
				return false, k + 1, nil
			}
			s.ros.rhs[i] = c*v - w.psi[i] - w.d[i]
		}
		luSolve(s.ros.lu, n, s.ros.piv, s.ros.rhs)
		norm := r.bdfNorm(s.ros.rhs, 1)
		rate := -1.0
		if old >= 0 {
			rate = norm / old
			if rate >= 1 || math.Pow(rate, float64(maxIter-k))/(1-rate)*norm > tol {
				return false, k + 1, nil
			}
		}
		for i := range n {
			w.y[i] += s.ros.rhs[i]
			w.d[i] += s.ros.rhs[i]
		}
		if norm == 0 || (rate >= 0 && rate/(1-rate)*norm < tol) {
			return true, k + 1, nil
		}
		old = norm
	}
	return false, k, nil
}

// bdfNorm returns the error norm (RMS, or the largest over ErrorParts) of
// scale_factor·x / w.scale.
func (r *solveRun[T]) bdfNorm(x []float64, factor float64) float64 {
	w := &r.s.bdf
	return r.s.mixed(func(lo, hi int) float64 {
		sum := 0.0
		for i := lo; i < hi; i++ {
			v := factor * x[i] / w.scale[i]
			sum += v * v
		}
		return math.Sqrt(sum / float64(hi-lo))
	})
}

// bdfJacobian forms J = ∂f/∂y at (tNew, prediction) by forward
// differences (n + 1 evaluations of f).
func (r *solveRun[T]) bdfJacobian(tNew float64) error {
	s, w := r.s, &r.s.bdf
	n, ros := s.n, &s.ros
	ros.ensure(n)
	for i := range n {
		s.tmp[i] = T(w.pred[i])
	}
	f0 := w.f
	if err := r.eval(evalProbe, 0, tNew, s.tmp, s.y1); err != nil {
		return err
	}
	for i := range n {
		f0[i] = float64(s.y1[i])
	}
	for j := range n {
		yj := float64(s.tmp[j])
		dy := math.Sqrt(eps) * math.Max(math.Abs(yj), 1e-3)
		s.tmp[j] = T(yj + dy)
		dy = float64(s.tmp[j]) - yj
		if err := r.eval(evalProbe, 0, tNew, s.tmp, s.y1); err != nil {
			return err
		}
		for i := range n {
			ros.jac[i*n+j] = (float64(s.y1[i]) - f0[i]) / dy
		}
		s.tmp[j] = T(yj)
	}
	r.st.Jacobians++
	if !allFiniteF(ros.jac[:n*n]) {
		w.jacSet = false
		return errNonFiniteJacobian
	}
	w.jacSet, w.jacCurrent, w.luValid = true, true, false
	return nil
}

// bdfHook calls OnStep for the step from r.t of size h.
func (r *solveRun[T]) bdfHook(h, tNew float64, accepted bool, ratio float64) error {
	s := r.s
	if s.OnStep == nil {
		return nil
	}
	si := StepInfo[T]{T: r.t, H: h, End: tNew, Accepted: accepted, Ratio: ratio, Y0: s.y, Y1: s.y1, Phase: s.opt.Phase}
	if err := s.OnStep(si); err != nil {
		return r.fail(r.t, h, err)
	}
	return nil
}

// bdfInterpolate writes into dst the bdf interpolant at tq of the step of
// size h and order k ending at tNew, whose differences are D[0…k].
func bdfInterpolate[T tensor.Float](dst []T, D [][]float64, k int, tNew, h, tq float64) {
	for i := range dst {
		v, p := D[0][i], 1.0
		for j := range k {
			p *= (tq - (tNew - h*float64(j))) / (h * float64(1+j))
			v += D[j+1][i] * p
		}
		dst[i] = T(v)
	}
}

// bdfEmit writes the outputs up to tNew, reached by the accepted step of
// size h at order k: inside the step from the polynomial through the
// differences, at tNew the state.
func (r *solveRun[T]) bdfEmit(tNew, h float64, k int) {
	s, w := r.s, &r.s.bdf
	for r.nextOut < len(r.ts) && (r.ts[r.nextOut]-tNew)*r.dir < 0 {
		bdfInterpolate(r.out[r.nextOut], w.D, k, tNew, h, r.ts[r.nextOut])
		r.nextOut++
	}
	if r.nextOut < len(r.ts) && r.ts[r.nextOut] == tNew {
		copy(r.out[r.nextOut], s.y1)
		r.nextOut++
	}
}
